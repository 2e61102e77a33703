import Foundation
import Testing
@testable import Flow

/// A batch executor over the local one: runs each submitted task in a task of its own, delivers
/// into the inbox, and records what it was handed.
private final class RecordingBatchExecutor: FlowBatchExecutor, @unchecked Sendable {
    private let lock = NSLock()
    private let local: FlowLocalExecutor
    private var running: [Task<Void, Never>] = []
    private(set) var batchSizes: [Int] = []
    private(set) var oneByOne = 0
    private(set) var cancelled = 0

    init(registry: FlowOperationRegistry) {
        local = FlowLocalExecutor(registry: registry)
    }

    func execute(_ task: FlowTask) async -> FlowTaskResult {
        lock.withLock { oneByOne += 1 }
        return await local.execute(task)
    }

    func canSubmit(_ task: FlowTask) -> Bool { task.groupIndex != nil }

    func submit(_ tasks: [FlowTask], into inbox: FlowResultInbox) {
        let local = local
        let started = tasks.map { task in Task { inbox.deliver(await local.execute(task)) } }
        lock.withLock {
            batchSizes.append(tasks.count)
            running += started
        }
    }

    func cancelAll(in inbox: FlowResultInbox) {
        let all = lock.withLock {
            cancelled += 1
            return running
        }
        for task in all { task.cancel() }
    }
}

@Suite struct BatchExecutorTests {
    @Test func aGroupGoesOutInBatchesNeverPastItsLimitAndKeepsInputOrder() async {
        let probe = ConcurrencyProbe()
        let registry = probeRegistry(probe) { item in Int(item.dropFirst()).map { 5 + ($0 * 7) % 13 } ?? 5 }
        let executor = RecordingBatchExecutor(registry: registry)
        let items = (0..<40).map { "i\($0)" }
        let flow = groupFlow(items: items, registry: registry, maxConcurrent: 8).setExecutor(executor)
        await flow.run()
        #expect(flow.isSuccess, "\(String(describing: flow.error))")
        #expect(flow.dataBucket["results"] as? [String] == items.map { "out_" + $0 })
        #expect(probe.peak <= 8 && probe.peak >= 2, "peak \(probe.peak)")
        #expect(executor.batchSizes.first == 8, "the first batch fills the limit: \(executor.batchSizes)")
        #expect(executor.batchSizes.reduce(0, +) == 40 && executor.oneByOne == 0)
        // Every element has its summary lines, tagged as in-process ones are.
        let summary = flow.generateSummary()
        #expect(summary.components(separatedBy: "DidFinish: successfully").count - 1 == 40)
    }

    @Test func oneFailurePastTheBudgetStopsTheGroupAndCancelsWhatStillRuns() async {
        let probe = ConcurrencyProbe()
        let registry = probeRegistry(probe) { item in item.hasPrefix("fail") ? 5 : 300 }
        let executor = RecordingBatchExecutor(registry: registry)
        let flow = groupFlow(items: ["a", "b", "fail1", "c", "d", "e"], registry: registry, maxConcurrent: 4).setExecutor(executor)
        await flow.run()
        #expect(!flow.isSuccess)
        // What still ran was cancelled (a timed bound here could not tell: the whole group takes
        // 0.6 s either way, and a loaded machine took 5.7 s).
        #expect(executor.cancelled == 1)
        #expect(flow.generateSummary().contains("[Group] not allow failure in group. stop immediately."))
    }

    @Test func aGroupWithRetriesGoesThroughExecuteOneByOne() async {
        let probe = ConcurrencyProbe()
        let registry = probeRegistry(probe) { _ in 1 }
        let executor = RecordingBatchExecutor(registry: registry)
        let flow = Flow(definition: FlowDefinition(name: "retried", steps: [
            .group(FlowGroupStep(op: "EchoOp", input: "items", output: "results", maxConcurrent: 2,
                                 retry: FlowRetryPolicy(attempts: 2, delay: .milliseconds(1)))),
        ]), registry: registry).setDataBucket(dataBucket: ["items": ["a", "b", "c"]]).setExecutor(executor)
        await flow.run()
        #expect(flow.isSuccess)
        #expect(executor.oneByOne == 3 && executor.batchSizes.isEmpty)
    }

    @Test func cancellingTheFlowEndsAWaitingGroupAndCancelsItsTasks() async {
        let probe = ConcurrencyProbe()
        let registry = probeRegistry(probe) { _ in 10_000 }
        let executor = RecordingBatchExecutor(registry: registry)
        let flow = groupFlow(items: ["a", "b", "c"], registry: registry, maxConcurrent: 3).setExecutor(executor)
        let run = Task { await flow.run() }
        while probe.startedNames.count < 3 { try? await Task.sleep(for: .milliseconds(5)) }
        let start = ContinuousClock.now
        flow.cancel()
        await run.value
        #expect(ContinuousClock.now - start < .seconds(5), "the group waited for its tasks")
        #expect(!flow.isSuccess)
        #expect(executor.cancelled == 1)
    }

    @Test func anInboxHandsOverWhatArrivedBeforeAndWhileItWaited() async {
        let inbox = FlowResultInbox()
        let results = (0..<3).map { index -> FlowTaskResult in
            var result = FlowTaskResult.failure(TestFailure(item: "x"), operationName: "EchoOp")
            result.groupIndex = index
            return result
        }
        inbox.deliver(results[0])
        inbox.deliver(results[1])
        #expect(await inbox.next().map(\.groupIndex) == [0, 1])
        Task {
            try? await Task.sleep(for: .milliseconds(20))
            inbox.deliver(results[2])
        }
        #expect(await inbox.next().map(\.groupIndex) == [2])
        let waiting = Task { await inbox.next() }
        try? await Task.sleep(for: .milliseconds(20))
        waiting.cancel()
        #expect(await waiting.value.isEmpty, "a cancelled wait ends empty")
    }
}
