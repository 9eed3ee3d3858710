/// What is wrong with a file the binary store was asked to read, and where: the underlying
/// error of the ``ObjectGraph/StoreError`` (code `corrupt`) the store throws.
///
/// The reader checks every length and count against the bytes that remain before it
/// allocates or reads, so a hostile file can only ever produce one of these.
public struct BinaryFileFormatError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public enum Problem: String, Sendable, Hashable {
        /// The file does not start with the binary store's magic bytes.
        case notABinaryStore
        /// The file is a binary store of a format version this build cannot read.
        case unsupportedVersion
        /// The file is shorter than its header says (or than any store can be).
        case truncated
        /// The file is longer than its header says.
        case trailingBytes
        /// The checksum over the content does not match: bytes changed after writing.
        case checksumMismatch
        /// The content is not a valid encoding, or names entities, attributes or rows the
        /// model does not have (a value out of range, a count that cannot fit, a duplicate).
        case malformed
    }

    /// The kind of problem.
    public let problem: Problem
    /// The byte offset in the file where the problem was found.
    public let offset: Int
    /// What was expected and what was found.
    public let detail: String

    /// Creates an error.
    public init(_ problem: Problem, at offset: Int, _ detail: String) {
        self.problem = problem
        self.offset = offset
        self.detail = detail
    }

    /// "malformed at byte 120: …".
    public var description: String { "\(problem.rawValue) at byte \(offset): \(detail)" }
}
