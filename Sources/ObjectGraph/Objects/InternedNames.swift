/// The process-wide table of entity names and store identifiers behind ``ObjectID``'s tokens.
///
/// **Threading contract.** Safe from any thread: every access takes the table's lock. Tokens
/// are never reused or removed, so a token read from an ID always names the same string. The
/// table grows by the number of distinct names ever used (entities of loaded models, stores
/// opened, names parsed from ID URIs), which stays small in practice.
final class InternedNames: Sendable {
    /// The store token of temporary IDs (no store).
    static let temporary: UInt32 = 0

    static let shared = InternedNames()

    private struct Table {
        var tokens: [String: UInt32] = [:]
        var names: [String] = ["(temporary)"]
    }

    private let table = Guarded(Table())

    /// The token of `name`, interning it on first use.
    func token(for name: String) -> UInt32 {
        table.withLock { Self.intern(name, in: &$0) }
    }

    /// Both tokens in one locked step (an ID's entity and store).
    func tokens(for first: String, _ second: String) -> (UInt32, UInt32) {
        table.withLock { (Self.intern(first, in: &$0), Self.intern(second, in: &$0)) }
    }

    /// The string a token stands for.
    func name(of token: UInt32) -> String {
        table.withLock { $0.names[Int(token)] }
    }

    private static func intern(_ name: String, in table: inout Table) -> UInt32 {
        if let token = table.tokens[name] { return token }
        let token = UInt32(table.names.count)
        table.names.append(name)
        table.tokens[name] = token
        return token
    }
}
