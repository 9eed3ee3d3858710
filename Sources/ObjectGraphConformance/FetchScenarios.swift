import Foundation
import ObjectGraph

enum FetchScenarios {
    static let all: [ConformanceScenario] = []
}
