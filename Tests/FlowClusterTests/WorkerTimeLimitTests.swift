import Flow
import FlowWire
import Foundation
import Testing

/// A real `flow-worker` driven by a hand-written coordinator (``RawCoordinator``): the rules of its
/// `WorkerStateMachine` that only show across processes, a time limit that stops a real op and a
/// drain started by a real SIGTERM.
@Suite struct WorkerTimeLimitTests {
    /// How a test's socket conversation went, handed back from its thread so the expectations run
    /// in the test's own task.
    struct Conversation: Sendable {
        var ready: WireMessage?
        var received: [(message: WireMessage, after: Duration)] = []
        var exit: ChildProcess.Termination?
        var stderr = ""

        /// Every result received, in arrival order, with when it arrived.
        var results: [(result: WireResult, after: Duration)] {
            var results: [(result: WireResult, after: Duration)] = []
            for entry in received {
                if case .result(let batch) = entry.message { results += batch.map { ($0, entry.after) } }
            }
            return results
        }
    }

    /// Starts a real worker against a ``RawCoordinator`` and, once it said READY, runs `script`
    /// (on a thread of its own), which returns what it received, timed from when it began; then
    /// stops the worker with SIGTERM and keeps its exit and stderr.
    static func converse(name: String, concurrency: Int,
                         _ script: @escaping @Sendable (RawCoordinator) throws -> [(message: WireMessage, at: ContinuousClock.Instant)])
        async throws -> Conversation {
        let scope = try ClusterScope()
        defer { scope.finish() }
        return try await onOwnThread { () throws -> Conversation in
            let coordinator = try RawCoordinator()
            defer { coordinator.close() }
            let worker = try scope.worker(connect: coordinator.endpoint, name: name, concurrency: concurrency)
            var conversation = Conversation()
            conversation.ready = try coordinator.next(timeout: .seconds(20))
            guard case .ready = conversation.ready else {
                conversation.stderr = worker.stderr
                return conversation
            }
            let start = ContinuousClock.now
            conversation.received = try script(coordinator).map { ($0.message, $0.at - start) }
            worker.send(SIGTERM)
            conversation.exit = Self.waitForExit(worker, coordinator: coordinator)
            conversation.stderr = worker.stderr
            return conversation
        }
    }

    @Test func aTaskPastItsTimeLimitIsStoppedAndAnsweredWithTheLimitLongBeforeTheOpWouldEnd() async throws {
        let conversation = try await Self.converse(name: "limited", concurrency: 1) { coordinator in
            try coordinator.send(.task([WireTask(taskID: 7, op: "SleepOp", parameters: ["ms": 5000], groupElement: "a",
                                                 elementIndex: 3, timeLimitMilliseconds: 300)]))
            return try coordinator.collect(timeout: .seconds(4.5)) { received in
                received.contains { if case .result = $0.message { true } else { false } }
            }.received
        }
        guard case .ready(let ready)? = conversation.ready else {
            Issue.record("the worker never said READY\n\(conversation.stderr)")
            return
        }
        #expect(ready.ops.contains("SleepOp"))
        let answer = try #require(conversation.results.first, "no RESULT within 4.5 s\n\(conversation.stderr)")
        #expect(answer.result.taskID == 7)
        #expect(answer.result.finishState == .withError("time limit of 300 ms exceeded"))
        #expect(answer.result.isPermanent == false, "a time limit is transient: a retry may succeed")
        #expect(answer.result.elementIndex == 3)
        #expect(answer.after >= .milliseconds(300), "stopped before its limit")
        #expect(answer.after < .seconds(2), "the op sleeps 5 s; its 300 ms limit must stop it (took \(answer.after))")
        #expect(conversation.exit == .exit(0), "\(conversation.stderr)")
    }

    @Test func aDrainingWorkerGivesANewTaskBackFinishesTheRunningOneThenSaysDisconnectAndExits0() async throws {
        let scope = try ClusterScope()
        defer { scope.finish() }
        let conversation = try await onOwnThread { () throws -> Conversation in
            let coordinator = try RawCoordinator()
            defer { coordinator.close() }
            // Two slots: a task refused while one runs is refused for the drain, not for lack of room.
            let worker = try scope.worker(connect: coordinator.endpoint, name: "stopping", concurrency: 2)
            var conversation = Conversation()
            conversation.ready = try coordinator.next(timeout: .seconds(20))
            guard case .ready = conversation.ready else { return conversation }
            let start = ContinuousClock.now
            try coordinator.send(.task([WireTask(taskID: 1, op: "SleepOp", parameters: ["ms": 1500])]))
            var (received, _) = try coordinator.collect(timeout: .milliseconds(200)) { _ in false }
            worker.send(SIGTERM)
            // The next TASK must reach a worker that already drains.
            let draining = try coordinator.collect(timeout: .seconds(5)) { _ in worker.stderr.contains("draining") }
            received += draining.received
            try coordinator.send(.task([WireTask(taskID: 2, op: "SleepOp", parameters: ["ms": 10], groupElement: "b", elementIndex: 0)]))
            received += try coordinator.collect(timeout: .seconds(6)) { received in
                received.contains { if case .disconnect = $0.message { true } else { false } }
            }.received
            conversation.received = received.map { ($0.message, $0.at - start) }
            conversation.exit = Self.waitForExit(worker, coordinator: coordinator)
            conversation.stderr = worker.stderr
            return conversation
        }
        guard case .ready = conversation.ready else {
            Issue.record("the worker never said READY\n\(conversation.stderr)")
            return
        }
        let results = conversation.results
        #expect(results.map(\.result.taskID) == [2, 1], "\(conversation.received.map(\.message))\n\(conversation.stderr)")
        #expect(results.first?.result.finishState == .cancelled, "a task that reaches a draining worker is given back")
        #expect(results.last?.result.finishState == .successfully, "the running task finishes and its RESULT is sent")
        if let late = results.last, late.result.taskID == 1 {
            #expect(late.after >= .milliseconds(1500), "task 1 sleeps 1.5 s")
        }
        guard case .disconnect? = conversation.received.last?.message else {
            Issue.record("DISCONNECT must come last: \(conversation.received.map(\.message))\n\(conversation.stderr)")
            return
        }
        #expect(conversation.exit == .exit(0), "\(conversation.stderr)")
    }

    /// The worker's queue (PROTOCOL.md §8.2) in a real process: it announces it, starts a queued
    /// task when a slot frees, gives a recalled one back unrun, and gives back its whole queue
    /// after a failure, its RESULT first.
    @Test func aRealWorkerQueuesGivesARecalledTaskBackAndItsQueueAfterAFailure() async throws {
        let conversation = try await Self.converse(name: "queueing", concurrency: 2) { coordinator in
            func element(_ id: UInt64, op: String = "SleepOp", ms: Int) -> WireTask {
                WireTask(taskID: id, op: op, parameters: ["ms": .integer(Int64(ms))], groupElement: .integer(Int64(id)), elementIndex: Int(id))
            }
            // 1 and 7 run 600 ms; 2 and 3 wait in the queue (as many as the slots); 2 is recalled.
            try coordinator.send(.task([element(1, ms: 600), element(7, ms: 600), element(2, ms: 10), element(3, ms: 10)]))
            try coordinator.send(.recall([2]))
            var received = try coordinator.collect(timeout: .seconds(10)) { received in
                received.flatMap { entry -> [WireResult] in if case .result(let results) = entry.message { results } else { [] } }.count >= 3
            }.received
            // 4 fails at once (no such op) beside 8: 5 and 6, queued behind them, come back unrun.
            try coordinator.send(.task([element(4, op: "NoSuchOp", ms: 0), element(8, ms: 600), element(5, ms: 10), element(6, ms: 10)]))
            received += try coordinator.collect(timeout: .seconds(10)) { received in
                received.contains { if case .returned(let references) = $0.message { references.contains { $0.taskID == 5 } } else { false } }
            }.received
            return received
        }
        guard case .ready(let ready)? = conversation.ready else {
            Issue.record("the worker never said READY\n\(conversation.stderr)")
            return
        }
        #expect(ready.features & WireReady.Feature.queue != 0, "the worker announces its queue")
        let order = conversation.received.flatMap { entry -> [String] in
            switch entry.message {
            case .result(let results): return results.map { "result \($0.taskID)" }
            case .returned(let references): return references.map { "returned \($0.taskID)" }
            default: return []
            }
        }
        let context = "\(order)\n\(conversation.stderr)"
        #expect(order.first == "returned 2", "the recalled task comes back before anything ends: \(context)")
        #expect(!order.contains("result 2"), "a task given back never runs: \(context)")
        #expect(Set(order.prefix(4)) == ["returned 2", "result 1", "result 7", "result 3"], "\(context)")
        #expect(order.firstIndex(of: "result 3").map { $0 > min(order.firstIndex(of: "result 1") ?? 9, order.firstIndex(of: "result 7") ?? 9) } == true,
                "the queued task starts when a slot frees: \(context)")
        let failure = try #require(order.firstIndex(of: "result 4"), "\(context)")
        #expect(Array(order[(failure + 1)...].prefix(2)).sorted() == ["returned 5", "returned 6"], "the failure first, then the queue: \(context)")
        #expect(!order.contains("result 5") && !order.contains("result 6"), "\(context)")
        let results = conversation.results
        #expect(results.first { $0.result.taskID == 3 }?.result.finishState == .successfully)
        #expect(results.first { $0.result.taskID == 4 }.map { !$0.result.finishState.isSuccess } == true)
        #expect(!conversation.stderr.contains("wait for a slot"), "a queue within the slot count is no violation\n\(conversation.stderr)")
    }

    /// Waits (heartbeating, at most 20 s) for the worker to exit; SIGKILLs it otherwise.
    ///
    /// A heartbeat to a worker that already said DISCONNECT fails (the ROUTER knows it no more):
    /// that ends the heartbeats, not the wait (it once killed a worker that was exiting with 0).
    static func waitForExit(_ worker: ChildProcess, coordinator: RawCoordinator) -> ChildProcess.Termination? {
        // 20 s: a loaded machine (the whole suite at once) once took more than 5 s to see a worker
        // that had logged "stopped" exit.
        let deadline = ContinuousClock.now + .seconds(20)
        var heartbeats = true
        while worker.isRunning, ContinuousClock.now < deadline {
            if heartbeats {
                do {
                    _ = try coordinator.collect(timeout: .milliseconds(100)) { _ in !worker.isRunning }
                } catch {
                    heartbeats = false
                }
            } else {
                _ = worker.waitForExitBlocking(timeout: ContinuousClock.now.duration(to: deadline))
            }
        }
        if worker.isRunning { worker.kill() }
        return worker.termination
    }
}
