import Foundation
import ObjectGraph

enum DeleteRuleScenarios {
    static let all: [ConformanceScenario] = []
}
