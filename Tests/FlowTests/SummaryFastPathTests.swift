import Foundation
import Testing

@testable import Flow

/// The shortcuts taken for speed write exactly what the general path writes.
@Suite struct SummaryFastPathTests {
    @Test func listsOfIntegersAndStringsReadAsStringDescribingWritesThem() {
        let values: [Any] = [
            [Int](), [7], [-3, 0, 42, Int.max], [String](), ["a"], ["a b", "quote \" and \\ and \n", "ünï"], [1, 2] as [Any], ["x", "y"] as [Any],
            [1, "a", 2.5, true, Optional<Int>.none as Any, Optional("b") as Any, [1, "c"] as [Any], ["k": 1], Int8(3)] as [Any],
            [] as [Any], ["only"] as [Any],
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
        // A list of texts held as [Any] (as a group's input is) is cut as a [String] is.
        let texts = (0..<10_000).map { "file-\($0).jpg" }
        #expect(FlowSummary.describe(texts.map { $0 as Any }, limit: 100) == FlowSummary.describe(texts, limit: 100))
        #expect(FlowSummary.describe(texts.map { $0 as Any }, limit: nil) == String(describing: texts))
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

    /// A value whose printed form changes when it is changed.
    final class Counter: CustomStringConvertible, @unchecked Sendable {
        var count = 0
        var description: String { "Counter(\(count))" }
    }

    @Test func settledValuesAreWrittenWhenReadAndOthersAtOnce() async {
        #expect(FlowSummary.isSettled([1, 2, 3]))
        #expect(FlowSummary.isSettled(["a": [1, "b"] as [Any], "c": 2.5] as [String: Any]))
        #expect(!FlowSummary.isSettled(Counter()))
        #expect(!FlowSummary.isSettled([1, Counter()] as [Any]))

        // A bucket of lists and numbers: its lines are made when the summary is, and read the
        // same as lines made at once.
        let counter = Counter()
        let flow = Flow()
            .setDataBucket(dataBucket: ["items": [3, 1, 2], "name": "n", "counter": counter])
            .add(operation: SetDataOp(key: "list", value: ["x", "y"] as [Any]))
            .add(operation: SetDataOp(key: "object", value: counter))
        await flow.run()
        #expect(flow.isSuccess)
        // The class instance changes after the flow has written it.
        counter.count = 5
        let summary = flow.generateSummary()
        #expect(summary.contains("[DataBucket] add for list: [\"x\", \"y\"]"))
        // Written when the flow wrote it, not when the summary was made.
        #expect(summary.contains("[DataBucket] add for object: Counter(0)"))
        #expect(summary.contains("counter: Counter(0)"))
        #expect(!summary.contains("Counter(5)"))
        #expect(summary.contains("items: [3, 1, 2]"))
        // Read again, a deferred line is the same text.
        #expect(flow.generateSummary() == summary)
    }
}

/// Writes one value to the bucket.
private final class SetDataOp: FlowOperation, @unchecked Sendable {
    let key: String
    let value: Any
    init(key: String, value: Any) {
        self.key = key
        self.value = value
    }
    override func mainLogic() {
        setData(name: key, value: value)
        finishSuccessfully()
    }
}
