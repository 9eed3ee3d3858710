// swift-tools-version: 6.0
import PackageDescription

// `make bench-grdb` sets OBJECTGRAPH_BENCH_GRDB=1: the benchmark is then built with a GRDB side
// (issue 4 asks ObjectGraph to beat GRDB), measured against the same raw sqlite3 side. GRDB is a
// dependency of nothing else, and without the variable it is not even resolved.
let benchmarksGRDB = Context.environment["OBJECTGRAPH_BENCH_GRDB"] == "1"

let package = Package(
    name: "ObjectGraph",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ObjectGraph", targets: ["ObjectGraph"]),
        .library(name: "ObjectGraphInMemory", targets: ["ObjectGraphInMemory"]),
        .library(name: "ObjectGraphSQLite", targets: ["ObjectGraphSQLite"]),
        .library(name: "ObjectGraphBinaryFile", targets: ["ObjectGraphBinaryFile"]),
        .library(name: "ObjectGraphLMDB", targets: ["ObjectGraphLMDB"]),
        .library(name: "ObjectGraphConformance", targets: ["ObjectGraphConformance"]),
        .executable(name: "objectgraph", targets: ["objectgraph"]),
        .executable(name: "objectgraph-bench", targets: ["ObjectGraphBenchmarks"]),
        .executable(name: "objectgraph-fuzz-binary", targets: ["ObjectGraphBinaryFileFuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ] + (benchmarksGRDB ? [.package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0")] : []),
    targets: [
        .target(
            name: "ObjectGraph",
            dependencies: [.product(name: "OrderedCollections", package: "swift-collections")],
            path: "Sources/ObjectGraph"
        ),
        .target(
            name: "ObjectGraphInMemory",
            dependencies: ["ObjectGraph"],
            path: "Backends/InMemory"
        ),
        .target(
            name: "ObjectGraphBinaryFile",
            dependencies: ["ObjectGraph"],
            path: "Backends/BinaryFile",
            exclude: ["README.md"]
        ),
        .systemLibrary(
            name: "CSQLite",
            path: "Backends/CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(
            name: "ObjectGraphSQLite",
            dependencies: ["ObjectGraph", "CSQLite"],
            path: "Backends/SQLite"
        ),
        .systemLibrary(
            name: "CLMDB",
            path: "Backends/CLMDB",
            providers: [.apt(["liblmdb-dev"])]
        ),
        .target(
            name: "ObjectGraphLMDB",
            dependencies: ["ObjectGraph", "CLMDB"],
            path: "Backends/LMDB",
            exclude: ["README.md"]
        ),
        .target(
            name: "ObjectGraphConformance",
            dependencies: [
                "ObjectGraph",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ],
            path: "Sources/ObjectGraphConformance"
        ),
        .executableTarget(
            name: "objectgraph",
            dependencies: [
                "ObjectGraph", "ObjectGraphInMemory", "ObjectGraphSQLite", "ObjectGraphBinaryFile", "ObjectGraphLMDB",
                "ObjectGraphConformance",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/objectgraph"
        ),
        .executableTarget(
            name: "ObjectGraphBenchmarks",
            dependencies: [
                "ObjectGraph", "ObjectGraphSQLite", "ObjectGraphBinaryFile", "CSQLite", "ObjectGraphLMDB", "CLMDB",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ] + (benchmarksGRDB ? [.product(name: "GRDB", package: "GRDB.swift")] : []),
            path: "Benchmarks/ObjectGraphBenchmarks",
            swiftSettings: benchmarksGRDB ? [.define("GRDB_COMPARISON")] : []
        ),
        .executableTarget(
            name: "ObjectGraphBinaryFileFuzz",
            dependencies: ["ObjectGraph", "ObjectGraphBinaryFile"],
            path: "Fuzz/BinaryFile"
        ),
        .testTarget(
            name: "ObjectGraphTests",
            dependencies: [
                "ObjectGraph", "ObjectGraphInMemory",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ],
            path: "Tests/ObjectGraphTests"
        ),
        .testTarget(
            name: "ConformanceTests",
            dependencies: [
                "ObjectGraph", "ObjectGraphInMemory", "ObjectGraphSQLite", "ObjectGraphBinaryFile", "ObjectGraphLMDB",
                "ObjectGraphConformance",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ],
            path: "Tests/ConformanceTests"
        ),
        .testTarget(
            name: "SQLiteTests",
            dependencies: ["ObjectGraph", "ObjectGraphSQLite", "ObjectGraphInMemory", "ObjectGraphConformance", "CSQLite"],
            path: "Tests/SQLiteTests"
        ),
        .testTarget(
            name: "BinaryFileTests",
            dependencies: [
                "ObjectGraph", "ObjectGraphBinaryFile", "ObjectGraphBinaryFileFuzz", "ObjectGraphConformance",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ],
            path: "Tests/BinaryFileTests"
        ),
        .testTarget(
            name: "LMDBTests",
            dependencies: [
                "ObjectGraph", "ObjectGraphLMDB", "ObjectGraphInMemory", "ObjectGraphConformance", "CLMDB",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ],
            path: "Tests/LMDBTests"
        ),
        .testTarget(
            name: "CommandTests",
            dependencies: ["objectgraph", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tests/CommandTests"
        ),
        .testTarget(
            name: "InMemoryTests",
            dependencies: ["ObjectGraph", "ObjectGraphInMemory"],
            path: "Tests/InMemoryTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
