import Foundation
import ObjectGraph

/// One behaviour every store must show, written once and run against every backend.
///
/// A scenario's body throws ``ScenarioFailure`` (through ``check(_:_:file:line:)`` and
/// friends) instead of calling a test framework, so XCTest, Swift Testing, the command-line
/// tool or a third-party store's own suite can all run it.
public struct ConformanceScenario: Sendable, CustomStringConvertible {
    /// A unique name, `group.case` ("relationships.oneToOne.inverseFromBothSides").
    public let name: String
    /// Capabilities a store needs for the scenario to apply (``StoreCapabilities/persistent``
    /// for reopen scenarios). A store without them reports a skip with that reason.
    public let requirements: StoreCapabilities
    /// The scenario itself.
    public let body: @Sendable (ScenarioEnvironment) throws -> Void

    /// Creates a scenario.
    public init(_ name: String, requires requirements: StoreCapabilities = [], body: @escaping @Sendable (ScenarioEnvironment) throws -> Void) {
        self.name = name
        self.requirements = requirements
        self.body = body
    }

    /// The scenario's name.
    public var description: String { name }
}

/// A backend under test: how to make its store, and the scenarios it is known to fail, each
/// with a reason. A known failure that starts passing is reported as a failure, so the list
/// cannot rot.
public struct ConformanceBackend: Sendable, CustomStringConvertible {
    /// The store kind's name, as shown in reports ("memory", "sqlite", …).
    public let name: String
    /// Makes a description of a store located in `directory` (a fresh, empty folder per scenario).
    public let makeStore: @Sendable (_ directory: URL) -> StoreDescription
    /// Scenario name → reason, for scenarios this backend is known to fail.
    public let knownFailures: [String: String]

    /// Creates a backend entry.
    public init(name: String, knownFailures: [String: String] = [:], makeStore: @escaping @Sendable (_ directory: URL) -> StoreDescription) {
        self.name = name
        self.knownFailures = knownFailures
        self.makeStore = makeStore
    }

    /// The backend's name.
    public var description: String { name }
}

/// A scenario's check that did not hold.
public struct ScenarioFailure: Error, CustomStringConvertible {
    /// What was expected and what happened.
    public let message: String
    /// Where the check is.
    public let file: String
    /// The line of the check.
    public let line: Int

    /// "file:line: message".
    public var description: String { "\((file as NSString).lastPathComponent):\(line): \(message)" }
}

/// Fails the scenario unless `condition` holds.
public func check(_ condition: Bool, _ message: @autoclosure () -> String, file: String = #filePath, line: Int = #line) throws {
    guard condition else { throw ScenarioFailure(message: message(), file: file, line: line) }
}

/// Fails the scenario unless `actual == expected`.
public func checkEqual<T: Equatable>(_ actual: T, _ expected: T, _ what: @autoclosure () -> String = "", file: String = #filePath, line: Int = #line) throws {
    guard actual == expected else {
        let label = what()
        throw ScenarioFailure(message: "\(label.isEmpty ? "" : label + ": ")expected \(expected), got \(actual)", file: file, line: line)
    }
}

/// Runs `body`, which must throw an error of type `E`; returns it for further checks.
@discardableResult
public func checkThrows<E: Error>(_ type: E.Type, _ what: @autoclosure () -> String, file: String = #filePath, line: Int = #line, _ body: () throws -> Void) throws -> E {
    do {
        try body()
    } catch let error as E {
        return error
    } catch {
        throw ScenarioFailure(message: "\(what()): expected \(E.self), got \(Swift.type(of: error)): \(error)", file: file, line: line)
    }
    throw ScenarioFailure(message: "\(what()): expected \(E.self) to be thrown, nothing was", file: file, line: line)
}
