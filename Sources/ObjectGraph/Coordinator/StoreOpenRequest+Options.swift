import Foundation

/// Reading a store description's options: a backend names the options it knows and the values
/// each takes, so a misspelt option or value is a typed error at open
/// (``StoreError/Code/invalidOption``) instead of being ignored. An ignored `synchronous: "FUL"`
/// left a store that the caller believed flushed every save running with its default, and an
/// `initialMapSize` of `-1` reached LMDB as a size of 2^64 - 1.
extension StoreOpenRequest {
    /// Throws ``StoreError/Code/invalidOption`` for an option not in `known` (the backend's
    /// option names), naming it, the store kind `type` and the options that kind has.
    public func checkOptionNames(_ known: Set<String>, storeType type: String) throws {
        // Sorted: the first unknown option is named, the same one at every open.
        for name in options.keys.sorted() where !known.contains(name) {
            let list = known.isEmpty ? "no options" : "the options " + known.sorted().joined(separator: ", ")
            throw StoreError(.invalidOption, "\(storePlace(type)): unknown option '\(name)' (the \(type) store has \(list))")
        }
    }

    /// The value of option `name`, one of `values` (compared ignoring case, returned as spelled
    /// in `values`); `nil` when the option is not given. Throws
    /// ``StoreError/Code/invalidOption`` naming the option, its value and the values it takes.
    public func option(_ name: String, oneOf values: [String], storeType type: String) throws -> String? {
        guard let given = options[name] else { return nil }
        guard let match = values.first(where: { $0.lowercased() == given.lowercased() }) else {
            throw StoreError(
                .invalidOption,
                "\(storePlace(type)): option '\(name)' is '\(given)'; it takes \(values.joined(separator: ", "))")
        }
        return match
    }

    /// The value of integer option `name`, within `range`; `nil` when the option is not given.
    /// Throws ``StoreError/Code/invalidOption`` naming the option, its value and the range.
    public func integerOption(_ name: String, in range: ClosedRange<Int>, storeType type: String) throws -> Int? {
        guard let given = options[name] else { return nil }
        guard let value = Int(given), range.contains(value) else {
            throw StoreError(
                .invalidOption,
                "\(storePlace(type)): option '\(name)' is '\(given)'; it takes a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// "the sqlite store at /path", for messages.
    private func storePlace(_ type: String) -> String {
        "the \(type) store" + (url.map { " at \($0.path)" } ?? "")
    }
}
