import Foundation
import ObjectGraph

enum ContextScenarios {
    static let all: [ConformanceScenario] = []
}
