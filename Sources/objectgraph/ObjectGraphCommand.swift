import ArgumentParser

/// `objectgraph`: the command-line tool.
@main
struct ObjectGraphCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "objectgraph",
        abstract: "Core Data's object graph for Swift on Linux: demo and conformance tools.",
        subcommands: [DemoCommand.self, ConformanceCommand.self]
    )
}
