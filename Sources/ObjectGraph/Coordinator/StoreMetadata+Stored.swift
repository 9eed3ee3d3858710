import Foundation

extension StoreMetadata {
    /// Metadata read back from a store that keeps its entries as text: the model version
    /// hash, and the user entries as a JSON object of strings (what the SQLite and LMDB stores
    /// write). A missing hash, or user entries that are not such an object, throw
    /// ``StoreError/Code/corrupt`` naming `location` (the file and where in it): the hash was
    /// read as "" (refused as written "by model ," — another model), and unreadable user
    /// entries as none at all, so an application saw its entries silently gone. No user
    /// entries at all (`nil`) are none.
    public init(storeIdentifier: String, modelVersionHash: String?, userInfoJSON: Data?, location: String) throws {
        guard let modelVersionHash, !modelVersionHash.isEmpty else {
            throw StoreError(.corrupt, "\(location) has no model version hash in its metadata")
        }
        var userInfo: [String: String] = [:]
        if let userInfoJSON {
            do {
                userInfo = try JSONDecoder().decode([String: String].self, from: userInfoJSON)
            } catch {
                throw StoreError(
                    .corrupt, "\(location): the user metadata is not a JSON object of strings: \(String(decoding: userInfoJSON.prefix(80), as: UTF8.self))",
                    underlying: error)
            }
        }
        self.init(storeIdentifier: storeIdentifier, modelVersionHash: modelVersionHash, userInfo: userInfo)
    }
}
