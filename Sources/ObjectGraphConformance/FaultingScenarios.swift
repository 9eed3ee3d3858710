import Foundation
import ObjectGraph

enum FaultingScenarios {
    static let all: [ConformanceScenario] = []
}
