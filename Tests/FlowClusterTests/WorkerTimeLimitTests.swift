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

    @Test func aTaskPastItsTimeLimitIsStoppedAndAnsweredWithTheLimitLongBeforeTheOpWouldEnd() async throws {
        let scope = try ClusterScope()
        defer { scope.finish() }
        let conversation = try await onOwnThread { () throws -> Conversation in
            let coordinator = try RawCoordinator()
            defer { coordinator.close() }
            let worker = try scope.worker(connect: coordinator.endpoint, name: "limited", concurrency: 1)
            var conversation = Conversation()
            conversation.ready = try coordinator.next(timeout: .seconds(20))
            guard case .ready = conversation.ready else { return conversation }
            let sentAt = ContinuousClock.now
            try coordinator.send(.task([WireTask(taskID: 7, op: "SleepOp", parameters: ["ms": 5000], groupElement: "a",
                                                 elementIndex: 3, timeLimitMilliseconds: 300)]))
            let (received, _) = try coordinator.collect(timeout: .seconds(4.5)) { received in
                received.contains { if case .result = $0.message { true } else { false } }
            }
            conversation.received = received.map { ($0.message, $0.at - sentAt) }
            worker.send(SIGTERM)
            conversation.exit = Self.waitForExit(worker, coordinator: coordinator)
            conversation.stderr = worker.stderr
            return conversation
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

    /// Waits (heartbeating, at most 5 s) for the worker to exit; SIGKILLs it otherwise.
    static func waitForExit(_ worker: ChildProcess, coordinator: RawCoordinator) -> ChildProcess.Termination? {
        _ = try? coordinator.collect(timeout: .seconds(5)) { _ in !worker.isRunning }
        if worker.isRunning { worker.kill() }
        return worker.termination
    }
}
