import Foundation
import Testing

@testable import Flow

/// The shortcuts taken for speed write exactly what the general path writes.
@Suite struct SummaryFastPathTests {
    @Test func listsOfIntegersAndStringsReadAsStringDescribingWritesThem() {
        let values: [Any] = [
            [Int](), [7], [-3, 0, 42, Int.max], [String](), ["a"], ["a b", "quote \" and \\ and \n", "ünï"], [1, 2] as [Any], ["x", "y"] as [Any],
        ]
        for value in values {
            #expect(FlowSummary.describe(value, limit: nil) == String(describing: value), "\(value)")
        }
        // Cut at the same place as the general path cuts any list.
        let long = Array(0..<10_000)
        let general = FlowSummary.describe(long.map { $0 as Any } + [Optional<Int>.none as Any], limit: 100)
        let fast = FlowSummary.describe(long, limit: 100)
        #expect(fast.hasSuffix("…] (10000 values)") && general.hasSuffix("…] (10001 values)"))
        #expect(fast.dropLast(" (10000 values)".count) == general.dropLast(" (10001 values)".count))
    }

    @Test func groupTagsAreFourHexDigitsAndVary() {
        let tags = (0..<1000).map { _ in FlowGroupTag.make() }
        #expect(tags.allSatisfy { $0.count == 4 && $0.allSatisfy(\.isHexDigit) && $0 == $0.lowercased() })
        #expect(Set(tags).count > 950)
    }

    @Test func anOpsNameIsItsTypesNameAndItsIdentifierIsStable() {
        final class NamedForTestOp: FlowOperation, @unchecked Sendable {}
        let op = NamedForTestOp()
        #expect(op.operationName == String(describing: NamedForTestOp.self))
        #expect(op.identifier == op.identifier && op.identifier.count == 36)
        #expect(NamedForTestOp().identifier != op.identifier)
    }
}
