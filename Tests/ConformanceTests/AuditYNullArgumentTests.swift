import Foundation
import ObjectGraph
import Testing

/// `NSNull` in a substitution argument is nil, as NSPredicate has it (an audit): it was
/// refused with "expected a value, object, object ID or collection for %@, found Array<Any>".
@Suite("AuditY NSNull arguments")
struct AuditYNullArgumentTests {
    @Test func nsNullInListIsNil() throws {
        let predicate = try FetchPredicate(format: "age IN %@", argumentArray: [[20, NSNull()] as [Any]])
        guard case .comparison(let comparison) = predicate else { Issue.record("not a comparison: \(predicate)"); return }
        #expect(comparison.right == .list([.constant(.integer(20)), .constant(.null)]))
        #expect(try FetchPredicate(format: "age == %@", NSNull()) == FetchPredicate(format: "age == nil"))
    }
}
