import Flow
import FlowWire
import Foundation
import Testing
@testable import FlowCluster

/// A run's coordinator as a pure machine around the shared dispatch core: what is a run's own
/// (a revoked key, a failed send, the pool's traffic through the client machine, a task too large
/// to submit), with no socket.
@Suite struct RunStateMachineTests {
    typealias Run = RunStateMachine<UInt64>
    let t0 = ContinuousClock.now
    let alpha = Data("alpha".utf8)
    let pool = PoolClientStateMachine.peer

    func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .milliseconds(Int64(seconds * 1000)) }

    func task(_ id: UInt64) -> WireTask { WireTask(taskID: id, op: "EchoOp", groupElement: .integer(Int64(id)), elementIndex: Int(id)) }

    func result(_ id: UInt64, attempt: UInt32 = 1) -> WireResult {
        WireResult(taskID: id, attempt: attempt, finishState: .successfully, startedAt: Date(), finishedAt: Date(), events: [],
                   elementIndex: Int(id), output: .integer(Int64(id)))
    }

    func ready(slots: UInt32) -> WireMessage {
        .ready(WireReady(workerName: "alpha", features: 0, slotCount: slots, ops: ["EchoOp"], hostname: "test", processID: 1,
                         heartbeatIntervalMilliseconds: 1000))
    }

    /// A run with one worker, `alpha`, and tasks 1 and 2 sent to it.
    func runWithTwoTasksOnAlpha() -> Run {
        var run = Run(configuration: .init(), now: at(0))
        var actions: [Run.Action] = []
        run.receive(ready(slots: 2), from: alpha, now: at(0), into: &actions)
        run.submit(task(1), waiter: 1, avoid: [], group: nil, budget: -1)
        run.submit(task(2), waiter: 2, avoid: [], group: nil, budget: -1)
        _ = run.dispatch(now: at(0.1))
        #expect(run.core.workers[alpha]?.inFlight.count == 2)
        return run
    }

    @Test func aRevokedWorkerIsRemovedTellsWhyAndItsTasksWaitAgain() {
        var run = runWithTwoTasksOnAlpha()
        let actions = run.revoked(alpha, now: at(1))
        #expect(run.core.workers[alpha] == nil)
        let disconnects = actions.compactMap { action -> String? in
            if case .send(let peer, .disconnect(let reason)) = action, peer == alpha { return reason }
            return nil
        }
        #expect(disconnects == ["this worker's key is no longer authorised"])
        #expect(run.core.queue.sorted() == [1, 2], "its tasks wait for another worker")
        #expect(actions.contains { if case .report(.workerLeft(name: "alpha", _, requeued: 2)) = $0 { true } else { false } })
    }

    @Test func aRevokedKeyOfNoRegisteredWorkerChangesNothingAndSaysNothing() {
        var run = runWithTwoTasksOnAlpha()
        #expect(run.revoked(Data("stranger".utf8), now: at(1)).isEmpty)
        #expect(run.core.workers.count == 1)
    }

    @Test func aFailedSendEndsTheWorkerOnlyWhenItIsStillRegistered() {
        var run = runWithTwoTasksOnAlpha()
        let first = run.sendFailed(to: alpha, reason: "host unreachable", now: at(1))
        #expect(first.contains { if case .report(.workerLost(name: "alpha", _, requeued: 2)) = $0 { true } else { false } })
        #expect(run.core.workers.lost.map(\.name) == ["alpha"])
        // A second failed send to the same peer (queued in the same turn): it is gone already.
        #expect(run.sendFailed(to: alpha, reason: "host unreachable", now: at(1)).isEmpty)
    }

    @Test func aRunOnAPoolTakesThePoolsTrafficThroughTheClientMachine() {
        var run = Run(configuration: .init(), pool: "tcp://127.0.0.1:1", now: at(0))
        var actions: [Run.Action] = []
        let welcome = WireMessage.welcome(WireWelcome(poolName: "p", features: 0, slotCount: 4, heartbeatIntervalMilliseconds: 1000))
        let link = run.receiveFromPool(welcome, now: at(0.1), into: &actions)
        #expect(run.client?.welcomed == true)
        #expect(link.contains(.refusal(nil)))
        #expect(run.core.workers[pool]?.isPool == true)
        run.submit(task(1), waiter: 1, avoid: [], group: nil, budget: -1)
        _ = run.dispatch(now: at(0.2))
        actions = []
        _ = run.receiveFromPool(.done([WirePoolResult(worker: "w-9", result: result(1))]), now: at(0.3), into: &actions)
        let answered = actions.compactMap { action -> String? in
            if case .answer(1, _, _, let worker) = action { return worker }
            return nil
        }
        #expect(answered == ["w-9"])
    }

    @Test func aTaskTooLargeToSubmitIsAnsweredAsThePoolWould() {
        var run = Run(configuration: .init(), pool: "tcp://127.0.0.1:1", now: at(0))
        var actions: [Run.Action] = []
        _ = run.receiveFromPool(.welcome(WireWelcome(poolName: "p", features: 0, slotCount: 4, heartbeatIntervalMilliseconds: 1000)),
                                now: at(0.1), into: &actions)
        run.submit(task(1), waiter: 1, avoid: [], group: nil, budget: -1)
        _ = run.dispatch(now: at(0.2))
        actions = []
        let refused = SubmitSizeGuard.frames(for: [task(1)], limit: 10).refused
        #expect(refused.count == 1)
        run.refusedBySubmitGuard(refused, now: at(0.3), into: &actions)
        let failures = actions.compactMap { action -> String? in
            if case .answer(1, let wire, _, _) = action, case .withError(let text) = wire.finishState { return text }
            return nil
        }
        #expect(failures.count == 1 && failures[0].contains("more than the 10 bytes one task may carry to a pool"))
        #expect(run.core.tasks.isEmpty)
    }

    @Test func aPoolThatNeverWelcomesIsGreetedAgainAfterTheWindowOnlyOnceItPassed() {
        var run = Run(configuration: .init(), pool: "tcp://127.0.0.1:1", now: at(0))
        #expect(run.tick(now: at(2), window: .seconds(3)).link.isEmpty)
        #expect(run.tick(now: at(3), window: .seconds(3)).link == [.reconnect])
        run.saidHello(now: at(3))
        #expect(run.tick(now: at(5), window: .seconds(3)).link.isEmpty, "the window counts from the last HELLO")
    }

    @Test func aRunWithWorkersOfItsOwnIgnoresPoolCalls() {
        var run = runWithTwoTasksOnAlpha()
        var actions: [Run.Action] = []
        #expect(run.receiveFromPool(.heartbeat, now: at(1), into: &actions).isEmpty)
        #expect(run.refusedHandshake(status: 400, key: nil).isEmpty)
        #expect(run.tick(now: at(1), window: .seconds(3)).link.isEmpty)
        #expect(run.client == nil && actions.isEmpty)
    }
}

/// The workers as the dispatch core keeps them: changed only through ``DispatchCore/WorkerTable``'s
/// calls, which keep the lost list and the offer index in step with them.
@Suite struct WorkerTableTests {
    typealias Table = DispatchCore<UInt64>.WorkerTable
    typealias Worker = DispatchCore<UInt64>.Worker

    func worker(_ name: String, ops: Set<String>) -> Worker {
        Worker(name: name, ops: ops, slots: 1, lastReceived: .now, lastSent: .now, heartbeatInterval: .seconds(1), features: 0)
    }

    @Test func onlyALostWorkerIsListedAsLostAndTheListIsBounded() {
        var table = Table()
        for number in 0..<(Table.lostKept + 3) {
            let peer = Data("w\(number)".utf8)
            table.register(worker("w\(number)", ops: ["Op\(number)"]), as: peer)
            table.remove(peer, lostFor: number == 0 ? nil : "silent")
        }
        #expect(table.isEmpty)
        #expect(table.lost.count == Table.lostKept)
        #expect(table.lost.first?.name == "w3" && table.lost.last?.name == "w\(Table.lostKept + 2)")
        #expect(table.lost.last?.ops == ["Op\(Table.lostKept + 2)"])
    }

    @Test func theOfferIndexFollowsTheWorkersItIsAskedAfterTheyChange() {
        var table = Table()
        table.register(worker("a", ops: ["EchoOp", "UploadOp"]), as: Data("a".utf8))
        table.register(worker("b", ops: ["EchoOp"]), as: Data("b".utf8))
        #expect(table.offers().everyWorker == ["EchoOp"])
        #expect(table.offers().someWorker == ["EchoOp", "UploadOp"])
        table.remove(Data("b".utf8))
        #expect(table.offers().everyWorker == ["EchoOp", "UploadOp"])
        table.register(worker("c", ops: ["ShellOp"]), as: Data("c".utf8))
        #expect(table.offers().everyWorker.isEmpty)
        #expect(table.offers().someWorker == ["EchoOp", "UploadOp", "ShellOp"])
    }

    @Test func aWorkerIsChangedInPlaceAndAnUnknownPeerIsNotMadeUp() {
        var table = Table()
        table.register(worker("a", ops: ["EchoOp"]), as: Data("a".utf8))
        #expect(table.withWorker(Data("a".utf8)) { $0.take(7, group: nil) } != nil)
        #expect(table[Data("a".utf8)]?.inFlight.contains(7) == true)
        #expect(table.withWorker(Data("z".utf8)) { $0.take(8, group: nil) } == nil)
        #expect(table[Data("a".utf8)]?.inFlight == [7])
        #expect(table.count == 1)
    }

    @Test func theWorkerFoundLastIsNotFoundAgainOnceWhoIsRegisteredChanged() {
        var table = Table()
        let a = Data("a".utf8), b = Data("b".utf8)
        table.register(worker("a", ops: ["EchoOp"]), as: a)
        #expect(table.withWorker(a) { $0.name } == "a")
        // Removed: the remembered worker is gone with it.
        table.remove(a)
        #expect(table.withWorker(a) { $0.name } == nil)
        // Others registered after it: the peer finds its own worker, wherever it now lies.
        table.register(worker("b", ops: ["EchoOp"]), as: b)
        table.register(worker("a2", ops: ["EchoOp"]), as: a)
        #expect(table.withWorker(b) { $0.name } == "b")
        #expect(table.withWorker(a) { $0.name } == "a2")
        for number in 0..<64 { table.register(worker("w\(number)", ops: []), as: Data("w\(number)".utf8)) }
        #expect(table.withWorker(a) { $0.name } == "a2")
        #expect(table.withWorker(b) { $0.take(9, group: nil) } != nil)
        #expect(table[b]?.inFlight == [9])
        table.removeAll()
        #expect(table.withWorker(b) { $0.name } == nil)
    }
}
