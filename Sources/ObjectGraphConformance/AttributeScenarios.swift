import Foundation
import ObjectGraph

enum AttributeScenarios {
    static let all: [ConformanceScenario] = []
}
