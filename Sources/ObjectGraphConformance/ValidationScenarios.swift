import Foundation
import ObjectGraph

enum ValidationScenarios {
    static let all: [ConformanceScenario] = []
}
