import Flow
import FlowWire
import Foundation
import Testing
@testable import FlowCluster

private let alpha = Data("alpha".utf8)
private let beta = Data("beta".utf8)

private func ready(_ name: String, slots: UInt32, ops: [String] = ["EchoOp"], heartbeatMilliseconds: UInt32 = 1000) -> WireMessage {
    .ready(WireReady(workerName: name, slotCount: slots, ops: ops, hostname: "test", processID: 1,
                     heartbeatIntervalMilliseconds: heartbeatMilliseconds))
}

private func task(_ id: UInt64, op: String = "EchoOp") -> WireTask {
    WireTask(taskID: id, op: op, groupElement: .integer(Int64(id)))
}

private func result(_ id: UInt64, attempt: UInt32 = 1) -> WireResult {
    WireResult(taskID: id, attempt: attempt, finishState: .successfully, startedAt: Date(), finishedAt: Date(), events: [],
               output: .integer(Int64(id)))
}

/// Task ids sent to each worker by a list of actions.
private func sent(_ actions: [CoordinatorStateMachine.Action]) -> [Data: [UInt64]] {
    var byPeer: [Data: [UInt64]] = [:]
    for case .send(let peer, .task(let tasks)) in actions { byPeer[peer, default: []] += tasks.map(\.taskID) }
    return byPeer
}

private func completed(_ actions: [CoordinatorStateMachine.Action]) -> [UInt64] {
    actions.compactMap { if case .complete(let id, _, _) = $0 { return id } else { return nil } }
}

@Suite struct CoordinatorStateMachineTests {
    func machine(timeout: Double = 5) -> CoordinatorStateMachine {
        CoordinatorStateMachine(configuration: .init(liveness: 3, workerTimeout: timeout, maxAttempts: 3))
    }

    @Test func tasksWaitForAWorkerAndGoOutWhenOneSaysReady() {
        var machine = machine()
        #expect(sent(machine.submit(task(1), now: 0)).isEmpty)
        let actions = machine.receive(ready("w1", slots: 2), from: alpha, now: 1)
        #expect(sent(actions) == [alpha: [1]])
    }

    @Test func neverMoreInFlightThanAWorkersSlots() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 2), from: alpha, now: 0)
        var actions: [CoordinatorStateMachine.Action] = []
        for id in 1...5 as ClosedRange<UInt64> { actions += machine.submit(task(id), now: 0) }
        #expect(sent(actions) == [alpha: [1, 2]])
        #expect(machine.pending.count == 3)
        let next = machine.receive(.result([result(1)]), from: alpha, now: 0.1)
        #expect(completed(next) == [1])
        #expect(sent(next) == [alpha: [3]])
    }

    @Test func workSpreadsOverWorkersByFreeSlots() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 4), from: alpha, now: 0)
        _ = machine.receive(ready("w2", slots: 4), from: beta, now: 0)
        var actions: [CoordinatorStateMachine.Action] = []
        for id in 1...6 as ClosedRange<UInt64> { actions += machine.submit(task(id), now: 0) }
        let byPeer = sent(actions)
        #expect(byPeer[alpha]?.count == 3)
        #expect(byPeer[beta]?.count == 3)
    }

    @Test func aTaskGoesOnlyToAWorkerThatOffersItsOp() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 4, ops: ["Other"]), from: alpha, now: 0)
        _ = machine.receive(ready("w2", slots: 1, ops: ["EchoOp"]), from: beta, now: 0)
        let actions = machine.submit(task(1), now: 0) + machine.submit(task(2), now: 0)
        #expect(sent(actions) == [beta: [1]])
    }

    @Test func aTaskNoWorkerOffersFailsAfterTheWorkerTimeoutNamingTheOp() {
        var machine = machine(timeout: 2)
        _ = machine.receive(ready("w1", slots: 4, ops: ["EchoOp"]), from: alpha, now: 0)
        _ = machine.submit(task(7, op: "MissingOp"), now: 0)
        #expect(machine.tick(now: 1).allSatisfy { if case .fail = $0 { false } else { true } })
        let failures = machine.tick(now: 2.5).compactMap { action -> ClusterError? in
            if case .fail(7, let error) = action { return error } else { return nil }
        }
        guard case .noWorkerOffers(let op, _, let connected)? = failures.first else {
            Issue.record("no failure for task 7: \(failures)")
            return
        }
        #expect(op == "MissingOp")
        #expect(connected == 1)
        #expect(failures.first?.description.contains("MissingOp") == true)
    }

    @Test func aSilentWorkerIsDeclaredDeadAndItsTasksGoToAnother() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 2), from: alpha, now: 0)
        #expect(sent(machine.submit(task(1), now: 0) + machine.submit(task(2), now: 0)) == [alpha: [1, 2]])
        _ = machine.receive(ready("w2", slots: 2), from: beta, now: 2)
        _ = machine.receive(.heartbeat, from: beta, now: 3)
        let actions = machine.tick(now: 3.5)
        #expect(actions.contains { if case .report(.workerLost(name: "w1", _, requeued: 2)) = $0 { true } else { false } })
        let resent = actions.flatMap { action -> [WireTask] in
            if case .send(beta, .task(let tasks)) = action { return tasks } else { return [] }
        }
        #expect(resent.map(\.taskID) == [1, 2])
        #expect(resent.allSatisfy { $0.attempt == 2 })
    }

    @Test func aLateResultFromADeadWorkerIsDiscardedSoEveryOutputCountsOnce() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 1), from: alpha, now: 0)
        _ = machine.submit(task(1), now: 0)
        _ = machine.receive(ready("w2", slots: 1), from: beta, now: 3)
        _ = machine.tick(now: 3.5)
        // w1 comes back with its old result: unknown now, so it is told to re-register.
        let late = machine.receive(.result([result(1)]), from: alpha, now: 3.6)
        #expect(completed(late).isEmpty)
        #expect(late.contains { if case .send(alpha, .disconnect) = $0 { true } else { false } })
        // The same task id with the old attempt from the new worker is stale too.
        #expect(completed(machine.receive(.result([result(1, attempt: 1)]), from: beta, now: 3.7)).isEmpty)
        #expect(completed(machine.receive(.result([result(1, attempt: 2)]), from: beta, now: 3.8)) == [1])
        #expect(completed(machine.receive(.result([result(1, attempt: 2)]), from: beta, now: 3.9)).isEmpty)
    }

    @Test func aTaskThatKeepsKillingWorkersIsQuarantined() {
        var machine = machine()
        var now = 0.0
        var failure: ClusterError?
        for round in 0..<4 {
            let peer = Data("w\(round)".utf8)
            _ = machine.receive(ready("w\(round)", slots: 1), from: peer, now: now)
            if round == 0 { _ = machine.submit(task(1), now: now) }
            now += 4
            for case .fail(1, let error) in machine.tick(now: now) { failure = error }
        }
        guard case .quarantined(_, let attempts, _)? = failure else {
            Issue.record("task was never quarantined")
            return
        }
        #expect(attempts == 3)
    }

    @Test func aWorkerThatDisconnectsHandsBackItsTasks() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 2), from: alpha, now: 0)
        _ = machine.receive(ready("w2", slots: 2), from: beta, now: 0)
        let first = sent(machine.submit(task(1), now: 0))
        let owner = first.keys.first!
        let other = owner == alpha ? beta : alpha
        let actions = machine.receive(.disconnect(reason: "worker stopping"), from: owner, now: 1)
        #expect(sent(actions) == [other: [1]])
    }

    @Test func heartbeatsGoOutEveryIntervalAndUnknownPeersAreToldToRegister() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 1), from: alpha, now: 0)
        #expect(machine.tick(now: 0.5).isEmpty)
        #expect(machine.tick(now: 1.0).contains(.send(to: alpha, .heartbeat)))
        let unknown = machine.receive(.heartbeat, from: beta, now: 1)
        #expect(unknown.contains { if case .send(beta, .disconnect) = $0 { true } else { false } })
    }

    @Test func aCancelledTaskIsNotSentAndItsLateResultIsDropped() {
        var machine = machine()
        _ = machine.submit(task(1), now: 0)
        _ = machine.cancel(taskID: 1)
        #expect(sent(machine.receive(ready("w1", slots: 1), from: alpha, now: 0)).isEmpty)
        _ = machine.submit(task(2), now: 0)
        _ = machine.cancel(taskID: 2)
        #expect(completed(machine.receive(.result([result(2)]), from: alpha, now: 1)).isEmpty)
        #expect(machine.workers[alpha]?.free == 1)
    }

    @Test func eachWorkerIsHeartbeatedAndJudgedAtTheIntervalItAnnounced() {
        var machine = machine()
        _ = machine.receive(ready("fast", slots: 1, heartbeatMilliseconds: 200), from: alpha, now: 0)
        _ = machine.receive(ready("slow", slots: 1, heartbeatMilliseconds: 5000), from: beta, now: 0)
        #expect(machine.tick(now: 0.25) == [.send(to: alpha, .heartbeat)])
        _ = machine.receive(.heartbeat, from: alpha, now: 0.3)
        // Four seconds of silence: past the coordinator's own 1 s x 3, but the slow worker said 5 s.
        let later = machine.tick(now: 4)
        #expect(later.contains { if case .report(.workerLost(name: "fast", _, _)) = $0 { true } else { false } })
        #expect(!later.contains { if case .report(.workerLost(name: "slow", _, _)) = $0 { true } else { false } })
        #expect(machine.workers[beta] != nil)
    }
}
