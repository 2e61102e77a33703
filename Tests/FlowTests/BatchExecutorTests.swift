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
    private(set) var resumed: [UInt64] = []
    private(set) var limits: [Int?] = []
    /// What ``lookahead(for:maxConcurrent:)`` says.
    let ahead: Int

    init(registry: FlowOperationRegistry, lookahead: Int = 0) {
        local = FlowLocalExecutor(registry: registry)
        ahead = lookahead
    }

    func lookahead(for task: FlowTask, maxConcurrent: Int) -> Int { ahead }

    func resume(_ inbox: FlowResultInbox) {
        lock.withLock { resumed.append(inbox.id) }
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
            limits.append(inbox.concurrencyLimit)
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

    /// An executor with a lookahead is handed that many tasks beyond `maxConcurrent` (it keeps
    /// to the limit itself), and is told to go on after each burst with a failure the group
    /// tolerates.
    @Test func anExecutorWithALookaheadIsHandedMoreAndResumedAfterToleratedFailures() async {
        let probe = ConcurrencyProbe()
        let registry = probeRegistry(probe) { item in item.hasPrefix("fail") ? 1 : 20 }
        let executor = RecordingBatchExecutor(registry: registry, lookahead: 3)
        let items = (0..<20).map { $0 % 7 == 3 ? "fail\($0)" : "i\($0)" }
        let flow = Flow(definition: FlowDefinition(name: "budget", bucket: [:], steps: [
            .group(FlowGroupStep(op: "EchoOp", input: "items", output: "results", maxConcurrent: 4, maxFailures: .count(5))),
        ]), registry: registry).setDataBucket(dataBucket: ["items": items]).setExecutor(executor)
        await flow.run()
        #expect(flow.isSuccess, "\(String(describing: flow.error))")
        #expect(executor.batchSizes.first == 7, "4 that may run and 3 ahead: \(executor.batchSizes)")
        #expect(executor.batchSizes.reduce(0, +) == 20)
        #expect(Set(executor.limits) == [4], "each inbox says the group's limit")
        #expect((1...3).contains(executor.resumed.count), "one resume per burst with a failure: \(executor.resumed)")
        #expect(Set(executor.resumed).count == 1, "all for the group's one inbox")
    }

    @Test func withoutALookaheadTheEngineHandsOverNoMoreThanTheLimitAndNeverResumes() async {
        let probe = ConcurrencyProbe()
        let registry = probeRegistry(probe) { item in item.hasPrefix("fail") ? 1 : 5 }
        let executor = RecordingBatchExecutor(registry: registry)
        let items = (0..<12).map { $0 == 3 ? "fail\($0)" : "i\($0)" }
        let flow = groupFlow(items: items, registry: registry, maxConcurrent: 4, allowFailure: true).setExecutor(executor)
        await flow.run()
        #expect(flow.isSuccess)
        #expect(executor.batchSizes.first == 4)
        #expect(executor.limits.allSatisfy { $0 == nil })
        #expect(executor.resumed.isEmpty)
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
        let registry = probeRegistry(probe) { _ in 60_000 }
        let executor = RecordingBatchExecutor(registry: registry)
        let flow = groupFlow(items: ["a", "b", "c"], registry: registry, maxConcurrent: 3).setExecutor(executor)
        let run = Task { await flow.run() }
        let allStarted = await probe.changes.wait(timeout: .seconds(30)) { probe.startedNames.count >= 3 }
        #expect(allStarted, "the group's 3 tasks never all started within 30 s: \(probe.startedNames)")
        let start = ContinuousClock.now
        flow.cancel()
        await run.value
        // Far under the tasks' 60 s (5.9 s seen on a machine loaded by the whole suite).
        #expect(ContinuousClock.now - start < .seconds(30), "the group waited for its tasks")
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
        // The time passing is what is tested: the result is delivered while next() already waits
        // (the inbox offers no event for a wait that has begun).
        Task {
            try? await Task.sleep(for: .milliseconds(20))
            inbox.deliver(results[2])
        }
        #expect(await inbox.next().map(\.groupIndex) == [2])
        let waiting = Task { await inbox.next() }
        // As above: the cancellation is meant to reach a wait that has begun.
        try? await Task.sleep(for: .milliseconds(20))
        waiting.cancel()
        #expect(await waiting.value.isEmpty, "a cancelled wait ends empty")
    }
}
