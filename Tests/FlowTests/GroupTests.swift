import Foundation
import Testing
@testable import Flow

@Suite struct GroupTests {
    @Test(arguments: [1, 2, 3, 5])
    func neverRunsMoreThanMaxConcurrentOpsAtOnce(limit: Int) async {
        let probe = ConcurrencyProbe()
        let items = (0..<12).map { "i\($0)" }
        let flow = groupFlow(items: items, registry: probeRegistry(probe), maxConcurrent: limit)
        await flow.run()
        #expect(flow.isSuccess)
        #expect(probe.peak == limit)
    }

    @Test func outputsKeepInputOrderWhenLaterElementsFinishFirst() async {
        let probe = ConcurrencyProbe()
        let registry = probeRegistry(probe) { item in item == "a" ? 200 : item == "b" ? 100 : 5 }
        let flow = groupFlow(items: ["a", "b", "c", "d"], registry: registry, maxConcurrent: 4)
        await flow.run()
        #expect(flow.dataBucket["results"] as? [String] == ["out_a", "out_b", "out_c", "out_d"])
    }

    @Test func eachOpSeesOnlyItsTemporaryBucket() async {
        let seen = ConcurrencyProbe()
        var registry = FlowOperationRegistry()
        registry.register("PeekOp", primaryInputParamKey: "x", primaryOutputParamKey: "y") { _ in
            FlowClosureOperation(name: "PeekOp", primaryInputParamKey: "x", primaryOutputParamKey: "y") { op in
                let secret: String? = try op.optionalValue("secret")
                seen.enter(secret ?? "none")
                seen.leave()
                op.set("y", try op.value("x", as: Int.self) * 10)
            }
        }
        let flow = Flow(definition: FlowDefinition(name: "t", steps: [
            .group(FlowGroupStep(op: "PeekOp", input: "xs", output: "ys")),
        ]), registry: registry).setDataBucket(dataBucket: ["xs": [1, 2, 3], "secret": "s3cr3t"])
        await flow.run()
        #expect(seen.startedNames == ["none", "none", "none"])
        #expect(flow.dataBucket["ys"] as? [Int] == [10, 20, 30])
    }

    @Test func allowFailureSkipsFailedOutputsAndSucceeds() async {
        let probe = ConcurrencyProbe()
        let flow = groupFlow(items: ["a", "fail1", "c", "fail2"], registry: probeRegistry(probe), allowFailure: true)
        await flow.run()
        #expect(flow.isSuccess)
        #expect(flow.dataBucket["results"] as? [String] == ["out_a", "out_c"])
        let lines = masked(flow)
        #expect(lines.contains("[EchoOp ####] DidFinish: withError: failed on fail1"))
        #expect(lines.contains("[FlowArrayGroupDispatcher] all finished. output size: 2"))
    }

    @Test func aFailedElementAddsNoOutputEvenIfItWroteOne() async {
        var registry = FlowOperationRegistry()
        registry.register("WriteThenFailOp", primaryInputParamKey: "item", primaryOutputParamKey: "result") { _ in
            FlowClosureOperation(name: "WriteThenFailOp", primaryInputParamKey: "item", primaryOutputParamKey: "result") { op in
                let item: String = try op.value("item")
                op.set("result", "out_" + item)
                if item.hasPrefix("fail") { throw TestFailure(item: item) }
            }
        }
        let flow = groupFlow(items: ["a", "fail1", "c", "e", "fail2"], registry: registry, allowFailure: true, op: "WriteThenFailOp")
        await flow.run()
        #expect(flow.isSuccess)
        #expect(flow.dataBucket["results"] as? [String] == ["out_a", "out_c", "out_e"])
    }

    @Test func firstFailureStopsTheGroupWhenFailureIsNotAllowed() async {
        let probe = ConcurrencyProbe()
        let items = ["fail0"] + (1..<20).map { "i\($0)" }
        let flow = groupFlow(items: items, registry: probeRegistry(probe) { $0 == "fail0" ? 1 : 100 }, maxConcurrent: 2)
        await flow.run()
        #expect(!flow.isSuccess)
        #expect(flow.dataBucket["results"] == nil)
        let lines = masked(flow)
        #expect(lines.contains("[Group] not allow failure in group. stop immediately."))
        #expect(!lines.contains { $0.contains("all finished") })
        // The first failure cancels the rest: no element starts after it, so at most the two
        // that may run at once ever started (only fail0, when it failed before the second
        // child task got a thread, as on a loaded CI machine).
        #expect(probe.startedNames.contains("fail0"))
        #expect((1...2).contains(probe.startedNames.count), "\(probe.startedNames)")
        #expect((flow.error as? TestFailure)?.item == "fail0")
    }

    @Test(arguments: [
        (["other": 1] as [String: any Sendable], "missing"),
        (["items": [] as [String]], "empty"),
        (["items": "not an array"], "not an array"),
    ])
    func groupWithoutInputFailsWithTheSeedMessage(bucket: [String: any Sendable], _ label: String) async {
        let flow = groupFlow(items: [], registry: probeRegistry(ConcurrencyProbe())).setDataBucket(dataBucket: bucket)
        await flow.run()
        #expect(!flow.isSuccess, "\(label)")
        #expect(flow.error == nil)
        let lines = masked(flow)
        #expect(lines.contains("[FlowArrayGroupDispatcher] group created: 0"))
        #expect(lines.contains("[Group] no operation to run for group; please make sure the input data: <items> is not empty"))
    }

    @Test func groupOpsAreTaggedWithAShortId() async {
        let flow = groupFlow(items: ["a"], registry: probeRegistry(ConcurrencyProbe()))
        await flow.run()
        let willStart = flow.logEntries.map(\.text).first { $0.hasSuffix("WillStart") } ?? ""
        #expect(willStart.wholeMatch(of: #/\[EchoOp [0-9a-f]{4}\] WillStart/#) != nil)
    }
}

@Suite struct CondensedSummaryTests {
    /// A group op that logs its element and fails for the ones named.
    static func registry(failing: Set<Int>) -> FlowOperationRegistry {
        var registry = FlowOperationRegistry()
        registry.register("ItemOp", primaryInputParamKey: "x", primaryOutputParamKey: "y") { _ in
            FlowClosureOperation(name: "ItemOp", primaryInputParamKey: "x", primaryOutputParamKey: "y") { op in
                let item = try op.value("x", as: Int.self)
                op.log(message: "item \(item)")
                if failing.contains(item) { throw FlowError.cancelled }
                op.set("y", item)
            }
        }
        return registry
    }

    static func run(_ count: Int, failing: Set<Int> = []) async -> Flow {
        let flow = Flow(definition: FlowDefinition(name: "t", bucket: ["xs": .array((0..<count).map { .integer(Int64($0)) })], steps: [
            .group(FlowGroupStep(op: "ItemOp", input: "xs", output: "ys", maxConcurrent: 7, allowFailure: true)),
            .operation(FlowOperationStep(op: "ItemOp", parameters: [:])),
        ]), registry: registry(failing: failing))
        await flow.run()
        return flow
    }

    @Test func aBigGroupKeepsItsFirstElementsAndFailuresAndCountsTheRest() async {
        let flow = await Self.run(150, failing: [77, 140])
        let text = flow.generateSummary(condensingGroupsOver: 100, showingFirst: 10) { "… \($0) more" }
        let items = text.split(separator: "\n").compactMap { $0.firstMatch(of: /\] item ([0-9]+)$/)?.1 }.compactMap { Int($0) }
        #expect(Set(items) == Set(0..<10).union([77, 140]), "\(items)")
        #expect(text.contains("… 138 more\n"))
        #expect(text.components(separatedBy: "… 138 more").count == 2, "one line stands for the hidden elements")
        // Lines that belong to no element are all kept, in order, and so is the full summary.
        let full = flow.generateSummary()
        let kept = full.split(separator: "\n").filter { !$0.contains("[ItemOp ") }
        #expect(text.split(separator: "\n").filter { !$0.contains("[ItemOp ") && !$0.contains("… 138 more") } == kept)
        #expect(full.split(separator: "\n").filter { $0.contains("] item ") }.count == 150)
    }

    @Test func longLinesAreCutWithHowMuchWasLeftOut() async throws {
        let flow = await Self.run(150)
        let text = flow.generateSummary(condensingGroupsOver: 100, showingFirst: 10, maxLineLength: 80) { "… \($0) more" }
        let lines = text.split(separator: "\n")
        #expect(lines.allSatisfy { $0.count < 160 }, "\(lines.map(\.count).max() ?? 0)")
        let dump = try #require(lines.first { $0.contains("[DataBucket] add for ys: ") })
        let full = try #require(flow.generateSummary().split(separator: "\n").first { $0.contains("[DataBucket] add for ys: ") })
        let kept = full.split(separator: " ", maxSplits: 2).last!
        #expect(dump.hasSuffix("… (\(kept.count - 80) more characters)"), "\(dump)")
    }

    @Test func aGroupAtTheLimitIsShownWhole() async {
        let flow = await Self.run(100)
        let text = flow.generateSummary(condensingGroupsOver: 100, showingFirst: 10) { "… \($0) more" }
        #expect(text == flow.generateSummary())
    }
}

/// Groups of ops that say their `mainLogic` never blocks (`runsMainLogicInline`), run by the
/// engine's child tasks that each take the next element as theirs finishes.
@Suite(.serialized) struct InlineGroupTests {
    /// Copies its input to its output, or fails on a negative one; counts how many run at once.
    final class CopyOp: FlowOperation, FlowOperationCreator, @unchecked Sendable {
        nonisolated(unsafe) static var probe = ConcurrencyProbe()
        static func create() -> FlowOperation { CopyOp() }
        override var primaryInputParamKey: String { "in" }
        override var primaryOutputParamKey: String { "out" }
        override var runsMainLogicInline: Bool { true }
        override func mainLogic() {
            guard let value: Int = getData(name: "in") else { return }
            Self.probe.enter(String(value))
            defer { Self.probe.leave() }
            if value < 0 { return finishWithError(error: TestFailure(item: String(value))) }
            setData(name: "out", value: value * 2)
            finishSuccessfully()
        }
    }

    @Test(arguments: [1, 3, 64])
    func everyElementRunsOnceAndOutputsKeepInputOrder(maxConcurrent: Int) async {
        CopyOp.probe = ConcurrencyProbe()
        let flow = Flow()
            .setDataBucket(dataBucket: ["items": Array(0..<2_000)])
            .addGrouped(operationCreator: CopyOp.self, dispatcher: FlowArrayGroupDispatcher(
                inputKey: "items", outputKey: "results", maxConcurrentOperationCount: maxConcurrent))
        await flow.run()
        #expect(flow.isSuccess)
        #expect(flow.dataBucket["results"] as? [Int] == (0..<2_000).map { $0 * 2 })
        #expect(CopyOp.probe.peak <= maxConcurrent)
        #expect(Set(CopyOp.probe.startedNames).count == 2_000 && CopyOp.probe.startedNames.count == 2_000)
        let summary = flow.generateSummary()
        #expect(summary.components(separatedBy: "DidFinish: successfully").count - 1 == 2_000)
    }

    @Test func aFailureEndsTheGroupAndNothingStartsAfterItIsHandedOver() async {
        CopyOp.probe = ConcurrencyProbe()
        // One lane: element 5 fails, and the lane takes no element while the engine judges it.
        let flow = Flow()
            .setDataBucket(dataBucket: ["items": [0, 1, 2, 3, 4, -5] + Array(6..<100)])
            .addGrouped(operationCreator: CopyOp.self, dispatcher: FlowArrayGroupDispatcher(
                inputKey: "items", outputKey: "results", maxConcurrentOperationCount: 1))
        await flow.run()
        #expect(!flow.isSuccess)
        #expect(CopyOp.probe.startedNames == ["0", "1", "2", "3", "4", "-5"])
        #expect((flow.error as? TestFailure)?.item == "-5")
    }
}

/// Writes its input's type and value, to show what a group element arrived as.
final class DescribeElementOp: FlowOperation, FlowOperationCreator, @unchecked Sendable {
    static func create() -> FlowOperation { DescribeElementOp() }
    override var primaryInputParamKey: String { "in" }
    override var primaryOutputParamKey: String { "out" }
    override func mainLogic() {
        guard let value: Any = getData(name: "in") else { return finishWithError(error: FlowDataError.insufficientInputData("in")) }
        setData(name: "out", value: "\(type(of: value)) \(value)")
        finishSuccessfully()
    }
}

@Suite struct GroupInputListTests {
    func describe(_ items: Any) async -> [String]? {
        let flow = Flow()
            .setDataBucket(dataBucket: ["items": items])
            .addGrouped(operationCreator: DescribeElementOp.self, dispatcher: FlowArrayGroupDispatcher(
                inputKey: "items", outputKey: "results", maxConcurrentOperationCount: 2))
        await flow.run()
        #expect(flow.isSuccess, "\(flow.logEntries.map(\.text))")
        let results = flow.dataBucket["results"] as? [String]
        #expect(results != nil, "\(flow.dataBucket) \(flow.logEntries.map(\.text))")
        return results
    }

    /// Typed lists are read without being cast to `[Any]` first: each element still arrives as
    /// itself, in order (and not wrapped in an `Optional`, as elements were before).
    @Test func typedAndMixedListsGiveTheirElementsAsThemselves() async {
        #expect(await describe([3, 1, 2]) == ["Int 3", "Int 1", "Int 2"])
        #expect(await describe(["b", "a"]) == ["String b", "String a"])
        #expect(await describe([1.5, 2.0]) == ["Double 1.5", "Double 2.0"])
        #expect(await describe([7, "x", 2.5] as [Any]) == ["Int 7", "String x", "Double 2.5"])
        #expect(await describe([Int64(5), Int64(6)]) == ["Int64 5", "Int64 6"])
    }

    @Test func aValueThatIsNotAListFailsTheGroup() async {
        let flow = Flow()
            .setDataBucket(dataBucket: ["items": 5])
            .addGrouped(operationCreator: DescribeElementOp.self, dispatcher: FlowArrayGroupDispatcher(
                inputKey: "items", outputKey: "results", maxConcurrentOperationCount: 2))
        await flow.run()
        #expect(!flow.isSuccess)
        #expect(flow.logEntries.map(\.text).contains { $0.contains("please make sure the input data: <items> is not empty") }, "\(flow.logEntries.map(\.text))")
    }
}
