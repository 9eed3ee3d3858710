import Foundation
import ObjectGraph

/// ObjectGraph's binary store (Core Data's binary store type): an atomic store that holds every
/// row in memory and writes the whole graph to one file at each save.
///
/// The file format is ``BinaryFileFormat`` (README.md in this folder). Saving writes a
/// temporary file, flushes it, renames it over the store and flushes the directory, so the
/// path always holds a complete store — the old one or the new one. A missing file is created
/// as an empty store when the store opens; an existing file is read whole and checked (frame,
/// CRC-32, then every value against the model) before anything is used, and a damaged file is
/// refused with ``ObjectGraph/StoreError/Code/corrupt`` and a ``BinaryFileFormatError`` naming
/// the problem and its byte offset. A file written by another model is refused with
/// ``ObjectGraph/StoreError/Code/incompatibleModel``.
///
/// One opener at a time: the store holds a ``StoreFileLock`` until it closes, and a second
/// opener — another process or another coordinator — gets ``ObjectGraph/StoreError/Code/busy``.
///
/// Options: `synchronous` = `FULL` (default: flush file and directory at each save) or `OFF`
/// (no flushes: a save survives a crash of the process but not of the machine).
///
/// **Threading contract.** As ``ObjectGraph/AtomicStore``: reads work on an immutable copy of
/// the contents; saves are serialized by the base, and each writes the file once.
public final class BinaryFileStore: AtomicStore, @unchecked Sendable {
    /// The store file.
    public let url: URL
    private let lock: StoreFileLock
    private let writer: AtomicFileWriter
    private let encoder: BinaryFileEncoder

    /// Opens (creating if missing) the store at `request.url`.
    public init(request: StoreOpenRequest) throws {
        guard let url = request.url else { throw StoreError(.io, "a binary store needs a file URL") }
        self.url = url
        try request.checkOptionNames(["synchronous"], storeType: "binary")
        let synchronous = try request.option("synchronous", oneOf: ["FULL", "OFF"], storeType: "binary") != "OFF"
        let directory = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError(.io, "cannot create the folder \(directory.path) for the binary store", underlying: error)
        }
        let lock = try StoreFileLock(storePath: url.path)
        let writer = AtomicFileWriter(url: url, synchronous: synchronous)
        let encoder = BinaryFileEncoder(model: request.model)
        let contents: AtomicStoreContents
        let created: Bool
        do {
            writer.removeLeftovers()
            if let bytes = try AtomicFileWriter.contents(of: url) {
                contents = try Self.contents(ofFile: bytes, model: request.model, configuration: request.configuration, path: url.path)
                created = false
            } else {
                contents = .empty(for: request, identifier: UUID().uuidString)
                created = true
            }
        } catch {
            lock.release()
            throw error
        }
        self.lock = lock
        self.writer = writer
        self.encoder = encoder
        super.init(request: request, contents: contents, capabilities: synchronous ? [.persistent, .durable] : [.persistent])
        if created {
            // A new store exists on disk from the start, so its identity survives a reopen
            // even before the first save.
            do { try persist(contents) } catch { close(); throw error }
        }
    }

    /// Writes the whole store: encode, then replace the file atomically.
    public override func persist(_ contents: AtomicStoreContents) throws {
        try writer.write(try encoder.encode(contents))
    }

    /// The store file's path, for error messages.
    public override var location: String { url.path }

    /// Marks the store closed and releases its lock.
    public override func close() {
        super.close()
        lock.release()
    }

    /// The metadata of the binary store at `url`, without opening it (and without its lock):
    /// for tools and migration, which must learn a store's model before choosing one.
    public static func metadata(at url: URL) throws -> StoreMetadata {
        guard let bytes = try AtomicFileWriter.contents(of: url) else { throw StoreError(.io, "there is no binary store at \(url.path)") }
        return try bytes.withUnsafeBytes { file in
            try corruptIfMalformed(url.path) {
                let frame = try BinaryFileDecoder.frame(file)
                var reader = BinaryFileDecoder.contentReader(file, frame)
                return try BinaryFileDecoder.metadata(&reader)
            }
        }
    }

    /// Decodes the bytes of a binary store file against `model` without opening a store — for
    /// tools and the fuzz target. Throws ``ObjectGraph/StoreError`` with code `corrupt` (and a
    /// ``BinaryFileFormatError``) for a damaged file, `incompatibleModel` for a file of another
    /// model (configuration `configuration`'s version hash).
    public static func contents(ofFile bytes: [UInt8], model: ManagedObjectModel, configuration: String? = nil, path: String = "<bytes>") throws -> AtomicStoreContents {
        let expected = model.versionHash(configuration: configuration)
        let decoder = BinaryFileDecoder(model: model)
        return try bytes.withUnsafeBytes { file in
            try corruptIfMalformed(path) {
                do {
                    return try decoder.decode(file, expectedModelHash: expected)
                } catch let mismatch as BinaryFileDecoder.ModelMismatch {
                    throw StoreError(.incompatibleModel, "the binary store at \(path) was written by model \(mismatch.storedHash), not this model \(expected)")
                }
            }
        }
    }

    private static func corruptIfMalformed<T>(_ path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let problem as BinaryFileFormatError {
            let what = problem.problem == .notABinaryStore ? "is not an ObjectGraph binary store" : "is damaged"
            throw StoreError(.corrupt, "the file \(path) \(what): \(problem)", underlying: problem)
        }
    }
}

extension StoreDescription {
    /// A binary store in the file at `url` (see ``BinaryFileStore``). Options: `synchronous` =
    /// `FULL` (default) or `OFF`; any other option or value is refused at open
    /// (``StoreError/Code/invalidOption``).
    public static func binaryFile(at url: URL, configuration: String? = nil, options: [String: String] = [:]) -> StoreDescription {
        StoreDescription(type: "binary", url: url, configuration: configuration, options: options) { request in
            try BinaryFileStore(request: request)
        }
    }
}
