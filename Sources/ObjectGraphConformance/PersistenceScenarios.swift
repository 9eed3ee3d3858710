import Foundation
import ObjectGraph

enum PersistenceScenarios {
    static let all: [ConformanceScenario] = []
}
