import ObjectGraph
import ObjectGraphConformance
import ObjectGraphInMemory

/// Every built-in backend. Adding a backend to the matrix is adding one entry here.
let allBackends: [ConformanceBackend] = [
    ConformanceBackend(name: "memory") { _ in .inMemory() },
]
