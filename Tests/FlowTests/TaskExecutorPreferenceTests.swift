import Foundation
import Testing
@testable import Flow

/// A `TaskExecutor` with one named thread of its own that runs its jobs in order, as a cluster's
/// I/O loop does between its polls.
final class OneThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false
    private var thread: UInt?
    private var enqueued = 0

    /// How many jobs it was given so far.
    var jobCount: Int { condition.withLock { enqueued } }

    init() {
        Thread { [self] in serve() }.start()
    }

    /// Its thread, as ``currentThread()`` gives it there.
    var threadID: UInt {
        condition.withLock {
            while thread == nil { condition.wait() }
            return thread!
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.withLock {
            jobs.append(job)
            enqueued += 1
            condition.signal()
        }
    }

    /// Ends the thread once its jobs have run.
    func stop() {
        condition.withLock {
            stopped = true
            condition.signal()
        }
    }

    private func serve() {
        condition.withLock {
            thread = currentThread()
            condition.broadcast()
        }
        while true {
            let job: UnownedJob? = condition.withLock {
                while jobs.isEmpty && !stopped { condition.wait() }
                return jobs.isEmpty ? nil : jobs.removeFirst()
            }
            guard let job else { return }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// The thread running the caller.
func currentThread() -> UInt {
    UInt(pthread_self())
}

/// Writes the thread its `run()` ran on to `thread`.
final class ThreadNotingOp: FlowAsyncOperation, @unchecked Sendable {
    let mayRun: Bool

    init(mayRunOnIOThread: Bool) {
        mayRun = mayRunOnIOThread
    }

    override var mayRunOnIOThread: Bool { mayRun }

    override func run() async throws {
        set("thread", currentThread())
    }
}

/// A local executor that prefers `loop` for the engine's task and notes the thread of each call.
final class PreferringExecutor: FlowExecutor, @unchecked Sendable {
    let loop: OneThreadExecutor
    // An NSLock, not a `Mutex`: the ThreadSanitizer pass cannot see a `Mutex`'s futex.
    private let lock = NSLock()
    private var calls: [UInt] = []

    /// The thread of each `execute` call, in order.
    var threads: [UInt] { lock.withLock { calls } }
    let local: FlowLocalExecutor

    init(loop: OneThreadExecutor, local: FlowLocalExecutor) {
        self.loop = loop
        self.local = local
    }

    var preferredTaskExecutor: (any TaskExecutor)? { loop }

    func execute(_ task: FlowTask) async -> FlowTaskResult {
        let thread = currentThread()
        lock.withLock { calls.append(thread) }
        return await local.execute(task)
    }
}

/// Where the engine and an op's `run()` execute when the run prefers an I/O thread: the engine
/// there, an async op there only when it says ``FlowAsyncOperation/mayRunOnIOThread``.
@Suite struct TaskExecutorPreferenceTests {
    @Test func anAsyncOpRunsOffAPreferredIOThreadUnlessItSaysItMay() async throws {
        let loop = OneThreadExecutor()
        defer { loop.stop() }
        let (allowed, other, afterwards) = await Task(executorPreference: loop) {
            let allowed = await FlowOperationRunner.run(ThreadNotingOp(mayRunOnIOThread: true), bucket: [:], groupTag: nil)
            let other = await FlowOperationRunner.run(ThreadNotingOp(mayRunOnIOThread: false), bucket: [:], groupTag: nil)
            return (allowed.bucket["thread"] as? UInt, other.bucket["thread"] as? UInt, currentThread())
        }.value
        #expect(allowed == loop.threadID)
        #expect(other != nil && other != loop.threadID, "an op that does not say it may ran on the I/O thread")
        // The caller is back on its thread after the op's hop away.
        #expect(afterwards == loop.threadID)
    }

    @Test func aFlowRunsItsEngineOnItsExecutorsPreferredTaskExecutor() async throws {
        let loop = OneThreadExecutor()
        defer { loop.stop() }
        var registry = FlowOperationRegistry()
        registry.register("NamingOp") { _ in ThreadNotingOp(mayRunOnIOThread: false) }
        let executor = PreferringExecutor(loop: loop, local: FlowLocalExecutor(registry: registry))
        let flow = Flow(definition: FlowDefinition(name: "preferring", steps: [
            .operation(FlowOperationStep(op: "NamingOp")),
            .operation(FlowOperationStep(op: "NamingOp")),
            .group(FlowGroupStep(op: "NamingOp", input: "items", output: "out", maxConcurrent: 2)),
        ]), registry: registry).setDataBucket(dataBucket: ["items": [1, 2, 3]]).setExecutor(executor)
        await flow.run()
        #expect(flow.isSuccess, "\(flow.generateSummary())")
        let threads = executor.threads
        #expect(threads.count == 5)
        #expect(threads.allSatisfy { $0 == loop.threadID }, "the engine handed tasks over on other threads than its loop's")
        // The ops themselves did not say they may run there.
        let opThread = flow.dataBucket["thread"] as? UInt
        #expect(opThread != nil && opThread != loop.threadID)
    }
    /// A resumed group takes back its recorded results on the engine's thread, which on a cluster
    /// is the coordinator's I/O thread: it gives the thread back every ``FlowEngine/replayTurn``
    /// of them, so that a million do not hold up the heartbeats for seconds.
    @Test func aLongReplayGivesItsThreadBackAsItGoes() async throws {
        let loop = OneThreadExecutor()
        defer { loop.stop() }
        let total = 40_000
        var registry = FlowOperationRegistry()
        registry.register("NamingOp") { _ in ThreadNotingOp(mayRunOnIOThread: false) }
        let executor = PreferringExecutor(loop: loop, local: FlowLocalExecutor(registry: registry))
        let journal = ReplayingJournal(results: (0..<total).map { index in
            var result = FlowTaskResult(operationName: "NamingOp", state: .successfully, error: nil, events: [], bucket: [:],
                                        startedAt: Date(), finishedAt: Date(), worker: nil)
            result.groupIndex = index
            result.groupOutput = index
            return FlowJournalRecord(result: result, tag: nil)
        })
        let flow = Flow(definition: FlowDefinition(name: "replay", steps: [
            .group(FlowGroupStep(op: "NamingOp", input: "items", output: "out", maxConcurrent: 4)),
        ]), registry: registry).setDataBucket(dataBucket: ["items": Array(0..<total)]).setExecutor(executor).setJournal(journal)
        let before = loop.jobCount
        await flow.run()
        #expect(flow.isSuccess, "\(flow.generateSummary())")
        #expect((flow.dataBucket["out"] as? [Int])?.count == total)
        // Nothing ran again; the engine's task came back to its thread once per turn at least.
        #expect(executor.threads.isEmpty)
        #expect(loop.jobCount - before >= total / FlowEngine.replayTurn)
    }
}

/// A journal that gives back the same group results for every step, and keeps nothing.
final class ReplayingJournal: FlowJournal, @unchecked Sendable {
    let results: [FlowJournalRecord]

    init(results: [FlowJournalRecord]) {
        self.results = results
    }

    func recordedResults(at step: FlowStepID) -> [FlowJournalRecord] { results }
    func groupStarted(at step: FlowStepID, total: Int) {}
    func accepted(_ record: FlowJournalRecord, at step: FlowStepID) {}
}
