import Flow
import Foundation
import Synchronization
import Testing

/// Lines a flow hands to its summary stream. An NSLock: ThreadSanitizer, which runs these tests,
/// cannot see the futex of a `Mutex`.
final class StreamedLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [FlowLogEntry] = []
    var all: [FlowLogEntry] { lock.withLock { lines } }
    func add(_ entry: FlowLogEntry) { lock.withLock { lines.append(entry) } }

    /// The summary a file fed from the stream would hold.
    func rendered(isSuccess: Bool) -> String {
        let formatter = FlowSummary.timeFormatter()
        return FlowSummary.header + all.map { FlowSummary.lineText($0, formatter: formatter) }.joined() + FlowSummary.footer(isSuccess: isSuccess)
    }
}

/// Text without time stamps and group element ids, to compare two runs of one flow.
func withoutTimesAndTags(_ text: String) -> String {
    text.replacingOccurrences(of: #"(?m)^\d{1,2}:\d{2}:\d{2} (AM|PM) "#, with: "", options: .regularExpression)
        .replacingOccurrences(of: #"\[(\w+) [0-9a-f]{4}\]"#, with: "[$1 ####]", options: .regularExpression)
}

@Suite struct RetentionTests {
    /// 300 elements one at a time (so two runs write their lines in the same order), two failing.
    static func run(_ count: Int = 300, failing: Set<Int> = [77, 240], retention: FlowElementRetention?,
                    stream: StreamedLines? = nil) async -> Flow {
        let flow = Flow(definition: FlowDefinition(name: "t", bucket: ["xs": .array((0..<count).map { .integer(Int64($0)) })], steps: [
            .group(FlowGroupStep(op: "ItemOp", input: "xs", output: "ys", maxConcurrent: 1, allowFailure: true)),
            .operation(FlowOperationStep(op: "ItemOp", parameters: [:])),
        ]), registry: CondensedSummaryTests.registry(failing: failing))
        flow.setElementRetention(retention)
        if let stream { flow.setSummaryStream { stream.add($0) } }
        await flow.run()
        return flow
    }

    @Test func aBigGroupKeepsOnlyItsFirstElementsAndFailuresInMemory() async throws {
        let flow = await Self.run(retention: FlowElementRetention(groupsOver: 100, keepingFirst: 10))
        let items = flow.logEntries.compactMap { $0.text.firstMatch(of: /\] item ([0-9]+)$/)?.1 }.compactMap { Int($0) }
        #expect(Set(items) == Set(0..<10).union([77, 240]), "\(items)")
        let groupRecords = flow.operationRecords.filter { $0.groupIndex != nil }
        #expect(groupRecords.count == 12)
        #expect(Set(groupRecords.compactMap(\.groupIndex)) == Set(0..<10).union([77, 240]))
        // What the flow computes does not change: every output, in order.
        let outputs = try #require(flow.dataBucket["ys"] as? [Any]).compactMap { $0 as? Int }
        #expect(outputs == (0..<300).filter { ![77, 240].contains($0) })
        #expect(flow.generateSummary().contains("[Group] … 288 more elements succeeded; their lines were not kept in memory"))
    }

    @Test func theCondensedSummaryIsTheOneWithoutARetention() async {
        let note: (Int) -> String = { "… \($0) more" }
        let thinned = await Self.run(retention: FlowElementRetention(groupsOver: 100, keepingFirst: 10))
        let whole = await Self.run(retention: nil)
        let a = withoutTimesAndTags(thinned.generateSummary(condensingGroupsOver: 100, showingFirst: 10, maxLineLength: 500, hiddenNote: note))
        let b = withoutTimesAndTags(whole.generateSummary(condensingGroupsOver: 100, showingFirst: 10, maxLineLength: 500, hiddenNote: note))
        #expect(a == b)
        #expect(a.contains("… 288 more\n"))
    }

    @Test func theSummaryStreamGetsEveryLineAsTheFullSummaryHasIt() async {
        let stream = StreamedLines()
        let thinned = await Self.run(retention: FlowElementRetention(groupsOver: 100, keepingFirst: 10), stream: stream)
        let whole = await Self.run(retention: nil)
        #expect(stream.all.filter { $0.text.hasSuffix("WillStart") }.count == 301)
        #expect(withoutTimesAndTags(stream.rendered(isSuccess: thinned.isSuccess)) == withoutTimesAndTags(whole.generateSummary()))
        #expect(!stream.all.contains { $0.text.contains("not kept in memory") }, "the stream has the lines themselves")
    }

    @Test func aSmallGroupIsKeptWhole() async {
        let flow = await Self.run(100, failing: [], retention: FlowElementRetention(groupsOver: 100, keepingFirst: 10))
        #expect(flow.operationRecords.count == 101)
        #expect(!flow.generateSummary().contains("not kept in memory"))
    }

    @Test func bucketListsAreWrittenOnlySoFarAndLongLinesAreKeptCut() async throws {
        var registry = FlowOperationRegistry()
        registry.register("LongLineOp") { _ in
            FlowClosureOperation(name: "LongLineOp") { op in op.log(message: String(repeating: "x", count: 5000)) }
        }
        let flow = Flow(definition: FlowDefinition(name: "t", bucket: ["big": .array((0..<10_000).map { .string("value-\($0)") })],
                                                   steps: [.operation(FlowOperationStep(op: "LongLineOp", parameters: [:]))]),
                        registry: registry)
        let stream = StreamedLines()
        flow.setElementRetention(FlowElementRetention(maxLineLength: 1000)).setSummaryStream { stream.add($0) }
        await flow.run()
        #expect(flow.isSuccess)
        let start = try #require(stream.all.first { $0.text.hasPrefix("[DataBucket] start with:") }).text
        #expect(start.hasPrefix("[DataBucket] start with:\nbig: [\"value-0\", \"value-1\", "))
        #expect(start.hasSuffix(", …] (10000 values)"), "\(start.suffix(60))")
        #expect(start.utf8.count < 1100)
        // An op's long line goes whole to the stream and cut into memory.
        #expect(stream.all.contains { $0.text.hasSuffix(String(repeating: "x", count: 5000)) })
        let kept = try #require(flow.logEntries.first { $0.text.contains("xxxx") }).text
        #expect(kept.hasSuffix("… (\(13 + 5000 - 1000) more characters)"), "\(kept.suffix(40))")
        #expect(kept.utf8.count < 1100, "\(kept.utf8.count)")
        // Without a retention the seed's whole dump stays.
        let plain = Flow(definition: FlowDefinition(name: "t", bucket: ["big": .array((0..<10_000).map { .string("value-\($0)") })], steps: []))
        await plain.run()
        #expect(plain.generateSummary().contains("\"value-9999\"]"))
    }
}
