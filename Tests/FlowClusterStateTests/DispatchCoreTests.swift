import Flow
import FlowWire
import Foundation
import Testing
@testable import FlowCluster

private let alpha = Data("alpha".utf8)
private let beta = Data("beta".utf8)
private let t0 = ContinuousClock.now

/// An instant `seconds` after the test clock's origin.
private func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .microseconds(Int64(seconds * 1_000_000)) }

private func ready(_ name: String, slots: UInt32, ops: [String] = ["EchoOp"], heartbeatMilliseconds: UInt32 = 1000,
                   features: UInt32 = 0) -> WireMessage {
    .ready(WireReady(workerName: name, features: features, slotCount: slots, ops: ops, hostname: "test", processID: 1,
                     heartbeatIntervalMilliseconds: heartbeatMilliseconds))
}

private func task(_ id: UInt64, op: String = "EchoOp") -> WireTask {
    WireTask(taskID: id, op: op, groupElement: .integer(Int64(id)), elementIndex: Int(id))
}

private func result(_ id: UInt64, attempt: UInt32 = 1, state: FlowFinishState = .successfully, index: Int? = nil) -> WireResult {
    WireResult(taskID: id, attempt: attempt, finishState: state, startedAt: Date(), finishedAt: Date(), events: [],
               elementIndex: index ?? Int(id), output: .integer(Int64(id)))
}

/// The waiter is the task id, so tests see which task each outcome went to.
typealias Machine = DispatchCore<UInt64>

/// Task ids sent to each worker by a list of actions.
private func sent(_ actions: [Machine.Action]) -> [Data: [UInt64]] {
    var byPeer: [Data: [UInt64]] = [:]
    for case .send(let peer, .task(let tasks)) in actions { byPeer[peer, default: []] += tasks.map(\.taskID) }
    return byPeer
}

/// TASK messages in a list of actions.
private func taskMessages(_ actions: [Machine.Action]) -> [[WireTask]] {
    actions.compactMap { if case .send(_, .task(let tasks)) = $0 { return tasks } else { return nil } }
}

private func finished(_ actions: [Machine.Action]) -> [(UInt64, FlowTaskResult)] {
    actions.compactMap { action in
        switch action {
        case .finish(let id, let result): (id, result)
        case .answer(let id, let result, let task, let worker): (id, FlowTaskResult(wire: result, for: task, worker: worker))
        default: nil
        }
    }
}

private func completed(_ actions: [Machine.Action]) -> [UInt64] {
    finished(actions).filter { $0.1.state.isSuccess }.map(\.0)
}

private func reports(_ actions: [Machine.Action]) -> [ClusterEvent] {
    actions.compactMap { if case .report(let event) = $0 { return event } else { return nil } }
}

@Suite struct DispatchCoreTests {
    func machine(timeout: Duration = .seconds(5)) -> Machine {
        Machine(configuration: .init(liveness: 3, workerTimeout: timeout, maxAttempts: 3))
    }

    /// Submits tasks and dispatches at once (outside any batching hold).
    func submit(_ ids: ClosedRange<UInt64>, to machine: inout Machine, at time: Double, op: String = "EchoOp") -> [Machine.Action] {
        for id in ids { machine.submit(task(id, op: op), waiter: id) }
        return machine.dispatch(now: at(time))
    }

    @Test func tasksWaitForAWorkerAndGoOutWhenOneSaysReady() {
        var machine = machine()
        #expect(sent(submit(1...1, to: &machine, at: 0)).isEmpty)
        _ = machine.receive(ready("w1", slots: 2), from: alpha, now: at(1))
        #expect(sent(machine.dispatch(now: at(1))) == [alpha: [1]])
    }

    /// A step's retry policy goes only to workers that announced they read it (READY feature bit 1);
    /// an older worker gets the task without it, as FLOW/01 sent it.
    @Test func theRetryPolicyGoesOnlyToWorkersThatAnnounceIt() {
        var machine = machine()
        _ = machine.receive(ready("new", slots: 1, features: WireReady.Feature.retryPolicy), from: alpha, now: at(0))
        _ = machine.receive(ready("old", slots: 1), from: beta, now: at(0))
        for id: UInt64 in 1...2 {
            var withRetry = task(id)
            withRetry.retry = WireRetryPolicy(FlowRetryPolicy(attempts: 4))
            machine.submit(withRetry, waiter: id)
        }
        let actions = machine.dispatch(now: at(0.1))
        var byPeer: [Data: WireTask] = [:]
        for case .send(let peer, .task(let tasks)) in actions { byPeer[peer] = tasks.first }
        #expect(byPeer[alpha]?.retry?.attempts == 4)
        #expect(byPeer[beta] != nil && byPeer[beta]?.retry == nil)
    }

    @Test func neverMoreInFlightThanAWorkersSlots() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 2), from: alpha, now: at(0))
        #expect(sent(submit(1...5, to: &machine, at: 0)) == [alpha: [1, 2]])
        // A full worker stops the look at the queue; what it did not reach waits in order.
        #expect(machine.queue == [3, 4, 5])
        let next = machine.receive(.result([result(1)]), from: alpha, now: at(0.1))
        #expect(completed(next) == [1])
        #expect(sent(machine.dispatch(now: at(0.2))) == [alpha: [3]])
    }

    @Test func workSpreadsOverWorkersByFreeSlots() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 4), from: alpha, now: at(0))
        _ = machine.receive(ready("w2", slots: 4), from: beta, now: at(0))
        let byPeer = sent(submit(1...6, to: &machine, at: 0))
        #expect(byPeer[alpha]?.count == 3)
        #expect(byPeer[beta]?.count == 3)
    }

    @Test func aTaskGoesOnlyToAWorkerThatOffersItsOp() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 4, ops: ["Other"]), from: alpha, now: at(0))
        _ = machine.receive(ready("w2", slots: 1, ops: ["EchoOp"]), from: beta, now: at(0))
        #expect(sent(submit(1...2, to: &machine, at: 0)) == [beta: [1]])
    }

    @Test func aTaskNoWorkerOffersFailsAfterTheWorkerTimeoutNamingTheOp() {
        var machine = machine(timeout: .seconds(2))
        _ = machine.receive(ready("w1", slots: 4, ops: ["EchoOp"]), from: alpha, now: at(0))
        _ = submit(7...7, to: &machine, at: 0, op: "MissingOp")
        #expect(finished(machine.tick(now: at(0))).isEmpty)
        #expect(finished(machine.tick(now: at(1))).isEmpty)
        let failures = finished(machine.tick(now: at(2.5)))
        #expect(failures.map(\.0) == [7])
        #expect(failures.first?.1.state.summaryText.contains("no worker offers op 'MissingOp'") == true)
        #expect(failures.first?.1.groupIndex == 7)
    }

    /// A task whose every worker was lost (they crashed on it, one after another) says so when
    /// the worker time-out ends, naming them, not that no worker offers its op (issue 46 item 13).
    @Test func aTaskWhoseWorkersWereAllLostSaysSoNotThatNoneOffersItsOp() {
        var machine = machine(timeout: .seconds(2))
        _ = machine.receive(ready("w1", slots: 1), from: alpha, now: at(0))
        _ = machine.receive(ready("w2", slots: 1), from: beta, now: at(0))
        #expect(sent(submit(1...1, to: &machine, at: 0)).values.flatMap { $0 } == [1])
        _ = machine.sendFailed(to: alpha, reason: "crashed", now: at(0.5))
        _ = machine.dispatch(now: at(0.5))
        _ = machine.sendFailed(to: beta, reason: "crashed", now: at(0.6))
        #expect(finished(machine.tick(now: at(1))).isEmpty)
        let failures = finished(machine.tick(now: at(3)))
        #expect(failures.map(\.0) == [1])
        let text = failures.first?.1.state.summaryText ?? ""
        #expect(text.contains("no worker offers op 'EchoOp' any more: the 2 workers that offered it were lost (w1, w2; last: "),
                "\(text)")
        #expect(!text.contains("flow-worker --list-ops"), "\(text)")
    }

    @Test func aSilentWorkerIsDeclaredDeadAndItsTasksGoToAnother() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 2), from: alpha, now: at(0))
        #expect(sent(submit(1...2, to: &machine, at: 0)) == [alpha: [1, 2]])
        _ = machine.receive(ready("w2", slots: 2), from: beta, now: at(2))
        _ = machine.receive(.heartbeat, from: beta, now: at(3))
        let actions = machine.tick(now: at(3.5))
        #expect(reports(actions).contains { if case .workerLost(name: "w1", _, requeued: 2) = $0 { true } else { false } })
        let resent = taskMessages(machine.dispatch(now: at(3.5))).flatMap { $0 }
        #expect(resent.map(\.taskID) == [1, 2])
        #expect(resent.allSatisfy { $0.attempt == 2 })
    }

    @Test func eachTaskRunningOnALostWorkerIsReportedWithHowLongItRanThere() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 3), from: alpha, now: at(0))
        _ = submit(1...2, to: &machine, at: 0.5)
        _ = submit(3...3, to: &machine, at: 2)
        _ = machine.receive(ready("w2", slots: 3), from: beta, now: at(2))
        _ = machine.receive(.heartbeat, from: beta, now: at(3.5))
        let lost = reports(machine.tick(now: at(3.5))).compactMap { event -> (String, Int?, Int, Duration)? in
            if case .taskLost(let worker, "EchoOp", let element, let attempt, let ranFor) = event { return (worker, element, attempt, ranFor) }
            return nil
        }
        #expect(lost.map(\.0) == ["w1", "w1", "w1"])
        #expect(lost.map(\.1) == [1, 2, 3])
        #expect(lost.map(\.2) == [1, 1, 1], "a loss is no op attempt")
        #expect(lost.map(\.3) == [.seconds(3), .seconds(3), .milliseconds(1500)])
        // Sent again, they are reported from their new start if that worker goes too.
        _ = machine.dispatch(now: at(3.5))
        _ = machine.receive(.disconnect(reason: "bye"), from: beta, now: at(4))
        let again = reports(machine.receive(.disconnect(reason: "bye"), from: beta, now: at(4)))
        #expect(again.isEmpty, "a worker gone once is not reported twice")
        #expect(machine.workers.isEmpty)
    }

    @Test func aWorkerThatLeavesReportsItsRunningTasksAsLostFromTheirOwnStart() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 2), from: alpha, now: at(0))
        _ = submit(1...1, to: &machine, at: 1)
        let events = reports(machine.receive(.disconnect(reason: "stopping"), from: alpha, now: at(1.25)))
        #expect(events.contains { if case .taskLost("w1", "EchoOp", 1, 1, .milliseconds(250)) = $0 { true } else { false } }, "\(events)")
        #expect(events.first.map { if case .workerLeft = $0 { true } else { false } } == true, "the worker's event comes first")
    }

    @Test func cancellingByWaiterFinishesQueuedAndRunningTasksOnceAndFreesNothingEarly() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 2), from: alpha, now: at(0))
        #expect(sent(submit(1...5, to: &machine, at: 0)) == [alpha: [1, 2]])
        let cancelled = machine.cancel { $0.isMultiple(of: 2) || $0 == 1 }
        #expect(Set(finished(cancelled).map(\.0)) == [1, 2, 4])
        #expect(finished(cancelled).allSatisfy { if case .cancelled = $0.1.state { true } else { false } })
        #expect(machine.queue == [3, 5], "queued tasks that were cancelled leave the queue, the others keep their order")
        // The running ones keep their slots until their results come, which are then dropped.
        #expect(sent(machine.dispatch(now: at(0.1))).isEmpty)
        #expect(completed(machine.receive(.result([result(1), result(2)]), from: alpha, now: at(0.2))).isEmpty)
        #expect(sent(machine.dispatch(now: at(0.3))) == [alpha: [3, 5]])
        #expect(machine.cancel { _ in true }.count == 2, "only the tasks still wanted finish again")
    }

    @Test func aLateResultFromADeadWorkerIsDiscardedSoEveryOutputCountsOnce() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 1), from: alpha, now: at(0))
        _ = submit(1...1, to: &machine, at: 0)
        _ = machine.receive(ready("w2", slots: 1), from: beta, now: at(3))
        _ = machine.tick(now: at(3.5))
        _ = machine.dispatch(now: at(3.5))
        // w1 comes back with its old result: unknown now, so it is told to re-register.
        let late = machine.receive(.result([result(1)]), from: alpha, now: at(3.6))
        #expect(completed(late).isEmpty)
        #expect(late.contains { if case .send(alpha, .disconnect) = $0 { true } else { false } })
        // The same task id with the old attempt from the new worker is discarded too.
        let old = machine.receive(.result([result(1, attempt: 1)]), from: beta, now: at(3.7))
        #expect(completed(old).isEmpty)
        #expect(reports(old) == [.discardedResult(worker: "w2", taskID: 1, attempt: 1, reason: .otherAttempt(current: 2))])
        #expect(completed(machine.receive(.result([result(1, attempt: 2)]), from: beta, now: at(3.8))) == [1])
        let duplicate = machine.receive(.result([result(1, attempt: 2)]), from: beta, now: at(3.9))
        #expect(completed(duplicate).isEmpty)
        #expect(reports(duplicate) == [.discardedResult(worker: "w2", taskID: 1, attempt: 2, reason: .notInFlight)])
    }

    @Test func discardsAreDebugLevelAndNeverInTheSummary() {
        let event = ClusterEvent.discardedResult(worker: "w2", taskID: 1, attempt: 1, reason: .runsElsewhere)
        #expect(event.logLevel == .debug)
        #expect(!event.belongsInSummary)
        #expect(event.metadata["task.id"] == "1")
        #expect(event.description.contains("given to another worker"))
    }

    @Test func aTaskThatKeepsKillingWorkersIsQuarantined() {
        var machine = machine()
        var now = 0.0
        var failure: FlowTaskResult?
        for round in 0..<4 {
            let peer = Data("w\(round)".utf8)
            _ = machine.receive(ready("w\(round)", slots: 1), from: peer, now: at(now))
            if round == 0 { machine.submit(task(1), waiter: 1) }
            _ = machine.dispatch(now: at(now))
            now += 4
            for (id, result) in finished(machine.tick(now: at(now))) where id == 1 { failure = result }
        }
        #expect(failure?.state.summaryText.contains("3 worker(s) were lost running it") == true, "\(String(describing: failure?.state))")
    }

    @Test func everyEndedRegistrationCountsTowardMaxAttempts() {
        // Lost three ways: a second READY, a DISCONNECT, a failed send. The third loss gives up.
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 1), from: alpha, now: at(0))
        _ = submit(1...1, to: &machine, at: 0)
        _ = machine.receive(ready("w1", slots: 1), from: alpha, now: at(0.1))
        #expect(taskMessages(machine.dispatch(now: at(0.1))).first?.first?.attempt == 2)
        _ = machine.receive(.disconnect(reason: "bye"), from: alpha, now: at(0.2))
        _ = machine.receive(ready("w1", slots: 1), from: alpha, now: at(0.3))
        #expect(taskMessages(machine.dispatch(now: at(0.3))).first?.first?.attempt == 3)
        let gaveUp = finished(machine.sendFailed(to: alpha, reason: "EHOSTUNREACH", now: at(1)))
        #expect(gaveUp.map(\.0) == [1])
        #expect(gaveUp.first?.1.state.summaryText.contains("3 worker(s) were lost") == true)
        #expect(machine.tasks.isEmpty)
    }

    @Test func aFailedSendDeclaresTheWorkerDeadAtOnce() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 1), from: alpha, now: at(0))
        _ = machine.receive(ready("w2", slots: 1), from: beta, now: at(0))
        let first = sent(submit(1...1, to: &machine, at: 0))
        let owner = first.keys.first!
        let other = owner == alpha ? beta : alpha
        let actions = machine.sendFailed(to: owner, reason: "Host unreachable", now: at(1))
        #expect(reports(actions).contains { if case .workerLost(_, let reason, 1) = $0 { reason.contains("unreachable") } else { false } })
        #expect(machine.workers[owner] == nil)
        #expect(sent(machine.dispatch(now: at(0))) == [other: [1]])
    }

    @Test func aCancelledResultRunsElsewhereWithoutUsingAnAttemptAndStopsDispatchToThatWorker() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 1), from: alpha, now: at(0))
        _ = submit(1...1, to: &machine, at: 0)
        _ = machine.receive(ready("w2", slots: 1), from: beta, now: at(0.1))
        let returned = machine.receive(.result([result(1, state: .cancelled)]), from: alpha, now: at(0.2))
        #expect(finished(returned).isEmpty, "the engine must not see a worker's cancellation")
        #expect(reports(returned) == [.taskReturned(worker: "w1", op: "EchoOp")])
        let again = taskMessages(machine.dispatch(now: at(0.2)))
        #expect(sent(machine.dispatch(now: at(0.2))).isEmpty)
        #expect(again.count == 1)
        #expect(again.first?.first?.taskID == 1)
        #expect(machine.tasks[1]?.worker == beta, "a stopping worker gets no more tasks")
        #expect(machine.tasks[1]?.losses == 0)
    }

    @Test func aResultWithTheWrongElementIndexFailsTheTaskInsteadOfMisplacingItsOutput() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 1), from: alpha, now: at(0))
        _ = submit(4...4, to: &machine, at: 0)
        let outcome = finished(machine.receive(.result([result(4, index: 9)]), from: alpha, now: at(0.1)))
        #expect(outcome.map(\.0) == [4])
        #expect(outcome.first?.1.groupIndex == 4)
        #expect(outcome.first?.1.state.summaryText.contains("element index 9") == true)
    }

    @Test func tasksSubmittedInPlaceOfABatchOfResultsLeaveInOneTask() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 4), from: alpha, now: at(0))
        #expect(taskMessages(submit(1...4, to: &machine, at: 0)).map(\.count) == [4])
        let results = machine.receive(.result((1...4).map { result($0) }), from: alpha, now: at(1))
        #expect(completed(results) == [1, 2, 3, 4])
        // The engine submits replacements one at a time; dispatch waits for all four.
        machine.submit(task(5), waiter: 5)
        #expect(machine.dispatch(now: at(1)).isEmpty)
        machine.submit(task(6), waiter: 6)
        machine.submit(task(7), waiter: 7)
        #expect(machine.dispatch(now: at(1.0002)).isEmpty)
        machine.submit(task(8), waiter: 8)
        #expect(taskMessages(machine.dispatch(now: at(1.0003))).map(\.count) == [4])
    }

    @Test func theBatchingHoldEndsAfterItsWindow() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 4), from: alpha, now: at(0))
        _ = submit(1...2, to: &machine, at: 0)
        _ = machine.receive(.result([result(1), result(2)]), from: alpha, now: at(1))
        machine.submit(task(3), waiter: 3)
        #expect(machine.dispatch(now: at(1)).isEmpty)
        #expect(machine.nextDeadline == at(1) + .milliseconds(1))
        #expect(sent(machine.dispatch(now: at(1.002))) == [alpha: [3]])
    }

    @Test func aRetryGoesToAWorkerThatHasNotFailedItWhenOneCanTakeIt() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 8), from: alpha, now: at(0))
        _ = machine.receive(ready("w2", slots: 1), from: beta, now: at(0))
        machine.submit(task(1), waiter: 1, avoid: ["w1"])
        #expect(sent(machine.dispatch(now: at(0))) == [beta: [1]], "w1 has more free slots, but failed this task")
        machine.submit(task(2), waiter: 2, avoid: ["w1"])
        #expect(sent(machine.dispatch(now: at(0))) == [alpha: [2]], "with w2 full, w1 beats waiting")
    }

    @Test func aWorkerThatDisconnectsHandsBackItsTasks() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 2), from: alpha, now: at(0))
        _ = machine.receive(ready("w2", slots: 2), from: beta, now: at(0))
        let first = sent(submit(1...1, to: &machine, at: 0))
        let owner = first.keys.first!
        let other = owner == alpha ? beta : alpha
        _ = machine.receive(.disconnect(reason: "worker stopping"), from: owner, now: at(1))
        #expect(sent(machine.dispatch(now: at(1))) == [other: [1]])
    }

    @Test func heartbeatsGoOutEveryIntervalAndUnknownPeersAreToldToRegister() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 1), from: alpha, now: at(0))
        #expect(machine.tick(now: at(0.5)).isEmpty)
        #expect(machine.tick(now: at(1.0)).contains { if case .send(alpha, .heartbeat) = $0 { true } else { false } })
        let unknown = machine.receive(.heartbeat, from: beta, now: at(1))
        #expect(unknown.contains { if case .send(beta, .disconnect) = $0 { true } else { false } })
    }

    @Test func aCancelledTaskFinishesAtOnceIsNotSentAndItsLateResultIsDropped() {
        var machine = machine()
        machine.submit(task(1), waiter: 1)
        let cancelled = finished(machine.cancel(taskID: 1))
        #expect(cancelled.map(\.0) == [1])
        #expect(cancelled.first?.1.state == .cancelled)
        _ = machine.receive(ready("w1", slots: 1), from: alpha, now: at(0))
        #expect(sent(machine.dispatch(now: at(0.1))).isEmpty)
        _ = submit(2...2, to: &machine, at: 0.1)
        #expect(finished(machine.cancel(taskID: 2)).map(\.0) == [2])
        #expect(machine.workers[alpha]?.free == 0, "the slot stays taken until the worker answers")
        #expect(finished(machine.receive(.result([result(2)]), from: alpha, now: at(1))).isEmpty)
        #expect(machine.workers[alpha]?.free == 1)
    }

    @Test func shutdownFinishesEveryWaitingTaskAsCancelledAndSaysGoodbye() {
        var machine = machine()
        _ = machine.receive(ready("w1", slots: 1), from: alpha, now: at(0))
        _ = submit(1...3, to: &machine, at: 0)
        let actions = machine.shutdown(reason: "stopping")
        #expect(finished(actions).map(\.0) == [1, 2, 3])
        #expect(finished(actions).allSatisfy { $0.1.state == .cancelled })
        #expect(actions.contains { if case .send(alpha, .disconnect) = $0 { true } else { false } })
    }

    @Test func eachWorkerIsHeartbeatedAndJudgedAtTheIntervalItAnnounced() {
        var machine = machine()
        _ = machine.receive(ready("fast", slots: 1, heartbeatMilliseconds: 200), from: alpha, now: at(0))
        _ = machine.receive(ready("slow", slots: 1, heartbeatMilliseconds: 5000), from: beta, now: at(0))
        let early = machine.tick(now: at(0.25))
        #expect(early.count == 1)
        #expect(early.contains { if case .send(alpha, .heartbeat) = $0 { true } else { false } })
        _ = machine.receive(.heartbeat, from: alpha, now: at(0.3))
        // Four seconds of silence: past the coordinator's own 1 s x 3, but the slow worker said 5 s.
        let later = reports(machine.tick(now: at(4)))
        #expect(later.contains { if case .workerLost(name: "fast", _, _) = $0 { true } else { false } })
        #expect(!later.contains { if case .workerLost(name: "slow", _, _) = $0 { true } else { false } })
        #expect(machine.workers[beta] != nil)
    }
}

/// A group whose tasks the engine hands over ahead of need (its lookahead): the machine runs at
/// most the group's limit of them, refills a freed slot at once, and starts none after a failure
/// until the engine resumes the group.
@Suite struct CoordinatorGroupLimitTests {
    let group = TaskGroupLimit(id: 7, limit: 2)

    func machine(with ids: ClosedRange<UInt64>) -> Machine {
        var machine = Machine(configuration: .init(liveness: 3, workerTimeout: .seconds(5), maxAttempts: 3))
        _ = machine.receive(ready("w1", slots: 4), from: alpha, now: at(0))
        for id in ids { machine.submit(task(id), waiter: id, group: group) }
        return machine
    }

    @Test func runsAtMostTheLimitAndRefillsAFreedSlotWithoutWaitingForTheEngine() {
        var machine = machine(with: 1...5)
        // The worker has 4 free slots; the group may run 2.
        #expect(sent(machine.dispatch(now: at(0))) == [alpha: [1, 2]])
        #expect(machine.runningCount == 2)
        _ = machine.receive(.result([result(1)]), from: alpha, now: at(0.1))
        // No batching window: the next task is already here, and leaves in the same turn.
        #expect(sent(machine.dispatch(now: at(0.1))) == [alpha: [3]])
        #expect(machine.runningCount == 2)
    }

    @Test func aFailureHoldsTheGroupUntilTheEngineResumesIt() {
        var machine = machine(with: 1...5)
        _ = machine.dispatch(now: at(0))
        let failed = machine.receive(.result([result(1, state: .withError("boom"))]), from: alpha, now: at(0.1))
        #expect(finished(failed).map(\.0) == [1])
        #expect(sent(machine.dispatch(now: at(0.1))).isEmpty, "nothing of the group starts while the failure is judged")
        #expect(sent(machine.dispatch(now: at(5))).isEmpty, "not even later")
        machine.resume(group: group.id)
        #expect(sent(machine.dispatch(now: at(5.1))) == [alpha: [3]])
    }

    @Test func aGroupGivenUpAfterAFailureLeavesNothingQueued() {
        var machine = machine(with: 1...5)
        _ = machine.dispatch(now: at(0))
        _ = machine.receive(.result([result(1, state: .withError("boom"))]), from: alpha, now: at(0.1))
        // The engine ends the group: the queued tasks finish cancelled, the running one keeps
        // its slot until its result.
        let cancelled = machine.cancel { (3...5).contains($0) || $0 == 2 }
        #expect(Set(finished(cancelled).map(\.0)) == [2, 3, 4, 5])
        #expect(finished(cancelled).allSatisfy { if case .cancelled = $0.1.state { true } else { false } })
        #expect(machine.queue.isEmpty)
        #expect(machine.pausedGroups.isEmpty)
    }

    @Test func aLostWorkersTasksFreeTheGroupsSlotsAndRunAgain() {
        var machine = machine(with: 1...3)
        #expect(sent(machine.dispatch(now: at(0))) == [alpha: [1, 2]])
        _ = machine.receive(ready("w2", slots: 4), from: beta, now: at(0.1))
        _ = machine.sendFailed(to: alpha, reason: "gone", now: at(0.2))
        #expect(machine.groupBound[group.id] == nil)
        // Lost tasks go first, and the group's limit still holds.
        #expect(sent(machine.dispatch(now: at(0.2))) == [beta: [1, 2]])
        #expect(machine.groupBound[group.id] == 2)
    }

    @Test func tasksWithoutAGroupStillWaitTheBatchingWindowForTheEngine() {
        var machine = Machine(configuration: .init(liveness: 3, workerTimeout: .seconds(5), maxAttempts: 3))
        _ = machine.receive(ready("w1", slots: 1), from: alpha, now: at(0))
        machine.submit(task(1), waiter: 1)
        machine.submit(task(2), waiter: 2)
        _ = machine.dispatch(now: at(0))
        _ = machine.receive(.result([result(1)]), from: alpha, now: at(0.1))
        #expect(sent(machine.dispatch(now: at(0.1))).isEmpty, "held for the engine's submission")
        #expect(sent(machine.dispatch(now: at(0.2))) == [alpha: [2]])
    }
}

/// Worker queues (feature bit 2, PROTOCOL.md §8.2): a group's tasks handed over ahead wait on a
/// worker that keeps a queue when no slot is free, so the worker refills a freed slot itself; the
/// group's limit still bounds what runs, and a failure or a cancel takes queued tasks back.
@Suite struct CoordinatorWorkerQueueTests {
    let group = TaskGroupLimit(id: 9, limit: 2)
    let queueing = WireReady.Feature.queue

    private func recalls(_ actions: [Machine.Action]) -> [Data: [UInt64]] {
        var byPeer: [Data: [UInt64]] = [:]
        for case .send(let peer, .recall(let ids)) in actions { byPeer[peer, default: []] += ids }
        return byPeer
    }

    /// One worker with 2 slots that queues, the group (limit 2) of tasks 1...6 submitted and sent.
    private func queued() -> (Machine, [Data: [UInt64]]) {
        var machine = Machine(configuration: .init(liveness: 3, workerTimeout: .seconds(5), maxAttempts: 3))
        _ = machine.receive(ready("w1", slots: 2, features: queueing), from: alpha, now: at(0))
        for id in UInt64(1)...6 { machine.submit(task(id), waiter: id, group: group) }
        let first = sent(machine.dispatch(now: at(0)))
        return (machine, first)
    }

    @Test func aGroupFillsTheSlotsThenTheQueueAndAFreedPlaceIsRefilled() {
        var (machine, first) = queued()
        #expect(first == [alpha: [1, 2, 3, 4]], "2 run, 2 wait in the worker's queue")
        #expect(machine.runningCount == 2)
        #expect(machine.queuedOnWorkers == 2)
        _ = machine.receive(.result([result(1)]), from: alpha, now: at(0.1))
        #expect(sent(machine.dispatch(now: at(0.1))) == [alpha: [5]], "the queue is topped up in the same turn")
    }

    @Test func aWorkerThatDoesNotQueueGetsNoMoreThanItsSlots() {
        var machine = Machine(configuration: .init(liveness: 3, workerTimeout: .seconds(5), maxAttempts: 3))
        _ = machine.receive(ready("w1", slots: 2), from: alpha, now: at(0))
        for id in UInt64(1)...6 { machine.submit(task(id), waiter: id, group: TaskGroupLimit(id: 9, limit: 16)) }
        #expect(sent(machine.dispatch(now: at(0))) == [alpha: [1, 2]])
    }

    @Test func tasksWithoutAGroupAreNeverQueued() {
        var machine = Machine(configuration: .init(liveness: 3, workerTimeout: .seconds(5), maxAttempts: 3))
        _ = machine.receive(ready("w1", slots: 2, features: queueing), from: alpha, now: at(0))
        for id in UInt64(1)...4 { machine.submit(task(id), waiter: id) }
        #expect(sent(machine.dispatch(now: at(0))) == [alpha: [1, 2]])
    }

    @Test func theGroupsLimitBoundsWhatCanRunWhateverWaitsInQueues() {
        // A limit below the slots: queueing would let more run at once, so nothing is queued.
        var below = Machine(configuration: .init(liveness: 3, workerTimeout: .seconds(5), maxAttempts: 3))
        _ = below.receive(ready("w1", slots: 4, features: queueing), from: alpha, now: at(0))
        for id in UInt64(1)...6 { below.submit(task(id), waiter: id, group: group) }
        #expect(sent(below.dispatch(now: at(0))) == [alpha: [1, 2]])

        // Two workers of 2 slots, limit 3: 2 on one and 1 on the other can run; more may wait only
        // behind the group's own tasks on the first, never on the second, where they could start.
        var split = Machine(configuration: .init(liveness: 3, workerTimeout: .seconds(5), maxAttempts: 3))
        _ = split.receive(ready("w1", slots: 2, features: queueing), from: alpha, now: at(0))
        _ = split.receive(ready("w2", slots: 2, features: queueing), from: beta, now: at(0))
        let three = TaskGroupLimit(id: 9, limit: 3)
        for id in UInt64(1)...8 { split.submit(task(id), waiter: id, group: three) }
        let sentTo = sent(split.dispatch(now: at(0)))
        #expect(sentTo.values.map(\.count).sorted() == [1, 4], "\(sentTo)")
        #expect(split.groupBound[three.id] == 3)
        #expect(split.runningCount == 3)
    }

    @Test func aFailureRecallsTheGroupsTasksAndWhatComesBackRunsAfterTheEngineResumes() {
        var (machine, _) = queued()
        let failed = machine.receive(.result([result(1, state: .withError("boom"))]), from: alpha, now: at(0.1))
        #expect(recalls(failed) == [alpha: [2, 3, 4]], "the worker holds more than its slots: any of them may wait")
        #expect(sent(machine.dispatch(now: at(0.1))).isEmpty, "the group is paused")
        // The worker gives back the two that waited (2 runs already).
        let back = machine.receive(.returned([WireTaskReference(taskID: 3, attempt: 1), WireTaskReference(taskID: 4, attempt: 1)]),
                                   from: alpha, now: at(0.2))
        #expect(finished(back).isEmpty, "a returned task is no outcome")
        #expect(machine.queue.prefix(2) == [3, 4], "back to the front of the queue")
        #expect(machine.workers[alpha]?.inFlight == [2])
        #expect(machine.tasks[3]?.task.attempt == 2, "a new dispatch")
        #expect(machine.tasks[3]?.losses == 0, "no loss counted")
        #expect(machine.workers[alpha]?.stopping == false, "a worker that gives back is not stopping")
        #expect(sent(machine.dispatch(now: at(0.3))).isEmpty, "still paused")
        machine.resume(group: group.id)
        let again = taskMessages(machine.dispatch(now: at(0.4)))
        #expect(again.flatMap { $0.map(\.taskID) } == [3, 4, 5])
        #expect(again.flatMap { $0.map(\.attempt) } == [2, 2, 1])
    }

    @Test func aCancelledGroupIsRecalledAndWhatComesBackIsForgotten() {
        var (machine, _) = queued()
        let cancelled = machine.cancel { $0 >= 3 }
        #expect(recalls(cancelled) == [alpha: [3, 4]])
        #expect(Set(finished(cancelled).map(\.0)) == [3, 4, 5, 6])
        _ = machine.receive(.returned([WireTaskReference(taskID: 4, attempt: 1)]), from: alpha, now: at(0.1))
        #expect(machine.tasks[4] == nil)
        #expect(machine.workers[alpha]?.inFlight == [1, 2, 3])
        #expect(machine.queue.isEmpty)
    }

    @Test func aReturnedReferenceOfAnotherAttemptOrWorkerIsDiscarded() {
        var (machine, _) = queued()
        _ = machine.receive(ready("w2", slots: 2, features: queueing), from: beta, now: at(0))
        let wrongAttempt = machine.receive(.returned([WireTaskReference(taskID: 3, attempt: 5)]), from: alpha, now: at(0.1))
        let wrongWorker = machine.receive(.returned([WireTaskReference(taskID: 4, attempt: 1)]), from: beta, now: at(0.1))
        #expect(reports(wrongAttempt).contains { if case .discardedResult(_, 3, 5, .otherAttempt(current: 1)) = $0 { true } else { false } })
        #expect(reports(wrongWorker).contains { if case .discardedResult(_, 4, 1, .runsElsewhere) = $0 { true } else { false } })
        #expect(machine.workers[alpha]?.inFlight == [1, 2, 3, 4])
    }

    /// Work stealing: alpha holds the group's 4 tasks (2 wait in its queue); beta joins with
    /// free slots and nothing is left to dispatch.
    private func stealable(limit: Int) -> Machine {
        var machine = Machine(configuration: .init(liveness: 3, workerTimeout: .seconds(5), maxAttempts: 3))
        _ = machine.receive(ready("w1", slots: 2, features: queueing), from: alpha, now: at(0))
        for id in UInt64(1)...4 { machine.submit(task(id), waiter: id, group: TaskGroupLimit(id: 9, limit: limit)) }
        _ = machine.dispatch(now: at(0))
        _ = machine.receive(ready("w2", slots: 2, features: queueing), from: beta, now: at(0.1))
        return machine
    }

    @Test func anIdleWorkerTakesOverTheNewestQueuedTasksAfterStealAfter() {
        var machine = stealable(limit: 4)
        #expect(machine.workers[alpha]?.inFlight.count == 4, "2 run, 2 wait")
        #expect(recalls(machine.dispatch(now: at(0.1))).isEmpty, "not at once: the engine may still submit")
        #expect(machine.nextDeadline == at(0.1) + .milliseconds(20), "the I/O loop wakes for it")
        let recalled = machine.dispatch(now: at(0.13))
        #expect(recalls(recalled) == [alpha: [3, 4]], "the newest, as many as beta has free slots")
        #expect(recalls(machine.dispatch(now: at(0.2))).isEmpty, "once")
        _ = machine.receive(.returned([3, 4].map { WireTaskReference(taskID: $0, attempt: 1) }), from: alpha, now: at(0.21))
        #expect(sent(machine.dispatch(now: at(0.21))) == [beta: [3, 4]])
        #expect(machine.stealing == 0)
        #expect(machine.groupBound[9] == 4)
    }

    @Test func aTaskThatStartedBeforeTheRecallJustFinishes() {
        var machine = stealable(limit: 4)
        _ = machine.dispatch(now: at(0.1))
        _ = machine.dispatch(now: at(0.13))
        // 4 had started: alpha answers it with a RESULT, not RETURNED.
        let done = machine.receive(.result([result(4)]), from: alpha, now: at(0.14))
        #expect(completed(done) == [4])
        #expect(machine.stealing == 1, "3 is still on its way back")
        _ = machine.receive(.returned([WireTaskReference(taskID: 3, attempt: 1)]), from: alpha, now: at(0.15))
        #expect(machine.stealing == 0)
        #expect(sent(machine.dispatch(now: at(0.15))) == [beta: [3]])
    }

    @Test func aRecalledTaskGivenBackByAStoppingWorkerIsNoLongerCountedAsOnItsWay() {
        var machine = stealable(limit: 4)
        _ = machine.dispatch(now: at(0.1))
        #expect(recalls(machine.dispatch(now: at(0.13))) == [alpha: [3, 4]])
        // alpha drains instead: it answers what it had not started `cancelled` (§8.8).
        _ = machine.receive(.result([result(3, state: .cancelled), result(4, state: .cancelled)]), from: alpha, now: at(0.14))
        #expect(machine.stealing == 0)
        #expect(machine.tasks[3]?.stolen == false && machine.tasks[4]?.stolen == false,
                "a requeued task must not count as recalled when it next leaves")
        #expect(sent(machine.dispatch(now: at(0.14)))[beta].map(Set.init) == [3, 4], "beta takes them; alpha stops")
    }

    @Test func nothingIsStolenThatTheIdleWorkerCouldNotStart() {
        // Limit 2: alpha's 2 running tasks are the group's bound; beta could start none.
        var machine = stealable(limit: 2)
        _ = machine.dispatch(now: at(0.1))
        #expect(recalls(machine.dispatch(now: at(0.5))).isEmpty)
        #expect(machine.stealing == 0)
    }

    @Test func aRecallFromAWorkerIsUnexpected() {
        var (machine, _) = queued()
        let actions = machine.receive(.recall([1]), from: alpha, now: at(0.1))
        #expect(reports(actions).contains { if case .unexpectedMessage(_, "RECALL") = $0 { true } else { false } })
        #expect(machine.workers[alpha]?.inFlight.count == 4)
    }

    /// A FLOW02 message that could not be taken (malformed, §9.1) is a sign of life (§8.5): a worker
    /// heard from that way within liveness × interval is not lost; one heard from no more is.
    @Test func aMalformedMessageKeepsAWorkerAlive() {
        var coordinator = Machine(configuration: .init(liveness: 3, workerTimeout: .seconds(5), maxAttempts: 3))
        _ = coordinator.receive(ready("w1", slots: 1), from: alpha, now: at(0))
        _ = coordinator.receive(ready("w2", slots: 1), from: beta, now: at(0))
        coordinator.heard(from: alpha, now: at(2.5))
        let lost = reports(coordinator.tick(now: at(3.5))).compactMap { if case .workerLost(let name, _, _) = $0 { name } else { nil } }
        #expect(lost == ["w2"])
        #expect(coordinator.workers[alpha] != nil)
    }
}

/// Time limits on the coordinator (PROTOCOL.md §8.9): a try its worker leaves unanswered past the
/// step's `timeout` and a grace (a tenth of the limit, at least 2 s) fails, naming the worker, and
/// a worker that leaves 3 tries so gets no more tasks. Driven by the machine's `now` alone.
@Suite struct CoordinatorTimeLimitTests {
    func machine() -> Machine {
        Machine(configuration: .init(liveness: 3, workerTimeout: .seconds(30), maxAttempts: 3))
    }

    /// A group element whose step has `timeout: seconds`.
    func timed(_ id: UInt64, seconds: Double) -> WireTask {
        var timed = task(id)
        timed.timeLimitMilliseconds = UInt32(seconds * 1000)
        return timed
    }

    /// Time passes to `time`, the workers heartbeating all along: alive, answering nothing else.
    func tick(_ machine: inout Machine, at time: Double, heartbeating peers: [Data] = [alpha]) -> [Machine.Action] {
        for peer in peers { _ = machine.receive(.heartbeat, from: peer, now: at(time)) }
        return machine.tick(now: at(time))
    }

    @Test func aTryLeftUnansweredPastItsTimeLimitAndTheGraceFailsNamingTheWorker() {
        var machine = machine()
        _ = machine.receive(ready("silent", slots: 1), from: alpha, now: at(0))
        machine.submit(timed(1, seconds: 2), waiter: 1)
        #expect(sent(machine.dispatch(now: at(0))) == [alpha: [1]])
        #expect(finished(tick(&machine, at: 2.5)).isEmpty, "past the limit the worker itself answers: wait for it")
        #expect(finished(tick(&machine, at: 3.95)).isEmpty, "the grace is 2 s")
        let actions = tick(&machine, at: 4)
        let failure = finished(actions)
        #expect(failure.map(\.0) == [1])
        let result = failure.first?.1
        #expect(result?.state.failureText == "time limit of 2 s exceeded (no answer from worker silent)")
        #expect(result?.worker == "silent", "the retry avoids it")
        #expect(result?.isPermanentFailure == false, "a time limit is transient: `retry` runs it again")
        #expect(result?.groupIndex == 1)
        #expect(reports(actions) == [.taskUnanswered(worker: "silent", op: "EchoOp", element: 1, limit: .seconds(2), waited: .seconds(4))])
        #expect(machine.workers[alpha]?.inFlight.isEmpty == true, "its slot is given back")
        #expect(machine.workers[alpha]?.quarantined == false, "one silence is not yet enough")
    }

    @Test func theGraceIsATenthOfALongLimit() {
        var machine = machine()
        _ = machine.receive(ready("silent", slots: 1), from: alpha, now: at(0))
        machine.submit(timed(1, seconds: 60), waiter: 1)
        _ = machine.dispatch(now: at(0))
        #expect(finished(tick(&machine, at: 65.9)).isEmpty)
        #expect(finished(tick(&machine, at: 66)).map(\.0) == [1])
    }

    @Test func anAnswerAfterTheLimitButWithinTheGraceIsTakenAsItIs() {
        var machine = machine()
        _ = machine.receive(ready("slow", slots: 1), from: alpha, now: at(0))
        machine.submit(timed(1, seconds: 2), waiter: 1)
        _ = machine.dispatch(now: at(0))
        _ = tick(&machine, at: 3)
        // The worker stopped the op at 2 s and answered for it after its 1 s stop grace.
        let answered = machine.receive(.result([result(1, state: .withError("time limit of 2 s exceeded"))]), from: alpha, now: at(3.1))
        #expect(finished(answered).map { $0.1.state.failureText } == ["time limit of 2 s exceeded"])
        #expect(finished(tick(&machine, at: 10)).isEmpty)
        #expect(machine.workers[alpha]?.unansweredCount == 0)
    }

    @Test func aLateResultForAFailedTryIsDroppedAndCountsNothing() {
        var machine = machine()
        _ = machine.receive(ready("silent", slots: 1), from: alpha, now: at(0))
        machine.submit(timed(1, seconds: 2), waiter: 1)
        _ = machine.dispatch(now: at(0))
        #expect(finished(tick(&machine, at: 4)).map(\.0) == [1])
        // The engine's retry is a new task; it takes the freed slot.
        machine.submit(timed(2, seconds: 2), waiter: 2)
        #expect(sent(machine.dispatch(now: at(4.1))) == [alpha: [2]])
        let late = machine.receive(.result([result(1)]), from: alpha, now: at(5))
        #expect(finished(late).isEmpty, "the try was failed already: its outcome is not handed over twice")
        #expect(reports(late) == [.discardedResult(worker: "silent", taskID: 1, attempt: 1, reason: .answeredTooLate)])
        #expect(ClusterEvent.discardedResult(worker: "silent", taskID: 1, attempt: 1, reason: .answeredTooLate).description
                    .contains("it came after that try had failed at its time limit"))
        #expect(machine.workers[alpha]?.inFlight == [2], "and frees no slot")
        let again = machine.receive(.result([result(1)]), from: alpha, now: at(5.1))
        #expect(reports(again) == [.discardedResult(worker: "silent", taskID: 1, attempt: 1, reason: .notInFlight)])
    }

    @Test func aWorkerThatLeavesThreeTriesUnansweredGetsNoMoreTasksAndWhatItHoldsMovesOn() {
        var machine = machine()
        _ = machine.receive(ready("silent", slots: 2), from: alpha, now: at(0))
        machine.submit(timed(1, seconds: 1), waiter: 1)
        machine.submit(timed(2, seconds: 1), waiter: 2)
        _ = machine.dispatch(now: at(0))
        #expect(finished(tick(&machine, at: 3)).map(\.0) == [1, 2])
        #expect(machine.workers[alpha]?.takesTasks == true, "2 silences")
        machine.submit(timed(3, seconds: 1), waiter: 3)
        machine.submit(task(4), waiter: 4)
        #expect(sent(machine.dispatch(now: at(3.1))) == [alpha: [3, 4]])
        let actions = tick(&machine, at: 6.2)
        #expect(finished(actions).map(\.0) == [3])
        let quarantined = reports(actions).filter { if case .workerQuarantined = $0 { true } else { false } }
        #expect(quarantined == [.workerQuarantined(name: "silent", unanswered: 3, requeued: 1)])
        let event = quarantined.first
        #expect(event?.description == "worker silent gets no more tasks: it left 3 tries unanswered past their time limits, "
                    + "though it still heartbeats; 1 task(s) given to other workers")
        #expect(event?.belongsInSummary == true && event?.logLevel == .warning)
        // Task 4 (no time limit) was taken from it as from a lost worker: the next attempt, elsewhere.
        #expect(machine.queue == [4])
        #expect(machine.tasks[4]?.task.attempt == 2)
        #expect(sent(machine.dispatch(now: at(6.25))).isEmpty, "nothing more goes to the silent worker")
        _ = machine.receive(ready("honest", slots: 2), from: beta, now: at(6.3))
        machine.submit(timed(5, seconds: 1), waiter: 5)
        #expect(sent(machine.dispatch(now: at(6.4))) == [beta: [4, 5]])
        // It stays registered and heartbeated.
        #expect(machine.workers[alpha] != nil)
        #expect(tick(&machine, at: 8, heartbeating: [alpha, beta]).contains { if case .send(alpha, .heartbeat) = $0 { true } else { false } })
    }

    @Test func aTaskInAWorkersQueueStartsItsClockOnlyWhenASlotFreesForIt() {
        var machine = machine()
        let group = TaskGroupLimit(id: 3, limit: 1)
        _ = machine.receive(ready("queueing", slots: 1, features: WireReady.Feature.queue), from: alpha, now: at(0))
        machine.submit(timed(1, seconds: 1), waiter: 1, group: group)
        machine.submit(timed(2, seconds: 1), waiter: 2, group: group)
        #expect(sent(machine.dispatch(now: at(0))) == [alpha: [1, 2]], "task 2 waits in the worker's queue")
        _ = machine.receive(.result([result(1)]), from: alpha, now: at(2))
        // Task 2 started when task 1's slot freed, at 2 s: not due at 3 s, as it would be from its sending.
        #expect(finished(tick(&machine, at: 2)).isEmpty)
        #expect(finished(tick(&machine, at: 3)).isEmpty)
        #expect(finished(tick(&machine, at: 4.95)).isEmpty)
        #expect(finished(tick(&machine, at: 5)).map(\.0) == [2])
    }

    @Test func aSilentWorkersQueuedTaskFailsOneLimitAfterTheTaskBeforeIt() {
        var machine = machine()
        let group = TaskGroupLimit(id: 3, limit: 1)
        _ = machine.receive(ready("silent", slots: 1, features: WireReady.Feature.queue), from: alpha, now: at(0))
        machine.submit(timed(1, seconds: 1), waiter: 1, group: group)
        machine.submit(timed(2, seconds: 1), waiter: 2, group: group)
        _ = machine.dispatch(now: at(0))
        #expect(finished(tick(&machine, at: 3)).map(\.0) == [1])
        // The coordinator counts the failed try's slot as freed: at its next look, task 2 is
        // taken as started.
        #expect(finished(tick(&machine, at: 3.5)).isEmpty)
        #expect(finished(tick(&machine, at: 6.4)).isEmpty)
        #expect(finished(tick(&machine, at: 6.5)).map(\.0) == [2])
    }

    /// §7.8: a RESULT answering a pool's CANCEL of a try that ran frees its slot, unlike a
    /// stopping worker's give-back of a queued one (§8.8): the task queued behind it starts, and
    /// is timed from then. Without it, that task was never failed however long it went unanswered.
    @Test func aCancelsAnswerForARunningTryFreesItsSlotSoTheQueuedOneIsTimed() {
        var machine = machine()
        let group = TaskGroupLimit(id: 3, limit: 1)
        let features = WireReady.Feature.queue | WireReady.Feature.cancel
        _ = machine.receive(ready("queueing", slots: 1, features: features), from: alpha, now: at(0))
        machine.submit(timed(1, seconds: 1), waiter: 1, group: group)
        machine.submit(timed(2, seconds: 1), waiter: 2, group: group)
        #expect(sent(machine.dispatch(now: at(0))) == [alpha: [1, 2]])
        #expect(finished(machine.cancel(taskID: 1)).map(\.0) == [1])
        _ = machine.receive(.result([result(1, state: .cancelled)]), from: alpha, now: at(0.5))
        #expect(machine.workers[alpha]?.stopping == false, "an answer to CANCEL does not say the worker stops")
        #expect(finished(tick(&machine, at: 0.5)).isEmpty)
        #expect(finished(tick(&machine, at: 3.45)).isEmpty)
        #expect(finished(tick(&machine, at: 3.5)).map(\.0) == [2], "started at 0.5 s: its limit of 1 s and the 2 s grace")
    }

    @Test func aTaskWithoutATimeLimitIsNeverFailedForTakingLong() {
        var machine = machine()
        _ = machine.receive(ready("busy", slots: 1), from: alpha, now: at(0))
        machine.submit(task(1), waiter: 1)
        _ = machine.dispatch(now: at(0))
        #expect(finished(tick(&machine, at: 3600)).isEmpty)
        #expect(machine.timedTasks.isEmpty)
    }

    @Test func aTryTheEngineNoLongerWantsStillFreesItsSlotWhenItsTimeRunsOut() {
        var machine = machine()
        _ = machine.receive(ready("silent", slots: 1), from: alpha, now: at(0))
        machine.submit(timed(1, seconds: 1), waiter: 1)
        _ = machine.dispatch(now: at(0))
        #expect(finished(machine.cancel(taskID: 1)).map(\.0) == [1])
        #expect(finished(tick(&machine, at: 3)).isEmpty, "handed over once, as cancelled")
        #expect(machine.workers[alpha]?.inFlight.isEmpty == true)
        #expect(machine.tasks.isEmpty)
    }
}
