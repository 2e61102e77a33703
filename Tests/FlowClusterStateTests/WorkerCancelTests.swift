import Flow
import FlowWire
import Foundation
import Logging
import Testing
@testable import FlowCluster

private let t0 = ContinuousClock.now
private let date = Date(timeIntervalSince1970: 1_000)

private func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .microseconds(Int64(seconds * 1_000_000)) }

/// A connected worker machine with `slots` slots and the queue of as many again.
private func connectedMachine(slots: Int = 1) -> WorkerStateMachine {
    let ready = WireReady(workerName: "w1", features: WorkerIOLoop.features, slotCount: UInt32(slots), ops: ["EchoOp"], hostname: "h",
                          processID: 1)
    var machine = WorkerStateMachine(configuration: .init(ready: ready, slots: slots, heartbeatInterval: .seconds(1), liveness: 3,
                                                          stopGrace: .seconds(1)), now: at(0))
    _ = machine.connected(now: at(0))
    return machine
}

private func task(_ id: UInt64, limit: UInt32 = 0) -> WireTask {
    WireTask(taskID: id, op: "EchoOp", groupElement: .integer(Int64(id)), elementIndex: Int(id), timeLimitMilliseconds: limit)
}

/// What an op returns: `state`, one log line, and an output.
private func returned(_ task: WireTask, _ state: FlowFinishState) -> WireResult {
    WireResult(taskID: task.taskID, attempt: task.attempt, finishState: state, startedAt: date, finishedAt: date,
               events: [WireEvent(time: date, kind: .log("working"))], elementIndex: task.elementIndex, output: .integer(1))
}

private func sent(_ actions: [WorkerStateMachine.Action]) -> [WireMessage] {
    actions.compactMap { if case .send(let message) = $0 { return message } else { return nil } }
}

private func started(_ actions: [WorkerStateMachine.Action]) -> [(run: UInt64, task: WireTask)] {
    actions.compactMap { if case .start(let run, let task) = $0 { return (run, task) } else { return nil } }
}

private func cancelledRuns(_ actions: [WorkerStateMachine.Action]) -> [UInt64] {
    actions.compactMap { if case .cancel(let run) = $0 { return run } else { return nil } }
}

private func results(_ actions: [WorkerStateMachine.Action]) -> [WireResult] {
    sent(actions).flatMap { if case .result(let results) = $0 { return results } else { return [] } }
}

private func returnedReferences(_ actions: [WorkerStateMachine.Action]) -> [WireTaskReference] {
    sent(actions).flatMap { if case .returned(let references) = $0 { return references } else { return [] } }
}

/// CANCEL (feature bit 3, a pool's): the worker drops the named queued tasks and stops the named
/// running ones, answering each `cancelled`, and goes on taking tasks.
@Suite struct WorkerCancelTests {
    @Test func theWorkerAnnouncesCancelBesideItsOtherFeatures() {
        let ready = WorkerIOLoop.ready(for: .init(endpoint: "tcp://127.0.0.1:9", name: "w1", concurrency: 2),
                                       registry: FlowOperationRegistry())
        #expect(ready.features & WireReady.Feature.cancel != 0, "bit 3")
        let earlier = WireReady.Feature.operationAttempt | WireReady.Feature.retryPolicy | WireReady.Feature.queue
        #expect(ready.features == earlier | WireReady.Feature.cancel | WireReady.Feature.progress | WireReady.Feature.requests
                    | WireReady.Feature.checkpoint,
                "bits 0 to 6 (progress and requests, §15; checkpoints, §7.9) and no other")
        #expect(WireReady.Feature.cancel == 1 << 3)
    }

    @Test func aQueuedTaskIsAnsweredCancelledAtOnceAndNeverStarts() {
        var machine = connectedMachine(slots: 1)
        let runs = started(machine.received(.task([task(1), task(2), task(3)]), now: at(0.1)))
        #expect(runs.map(\.task.taskID) == [1])
        let actions = machine.received(.cancel([2]), now: at(0.2))
        #expect(cancelledRuns(actions).isEmpty, "a queued task has no run to stop")
        let answer = results(machine.flush(now: at(0.2)))
        #expect(answer.map(\.taskID) == [2])
        #expect(answer.map(\.finishState) == [.cancelled])
        #expect(answer.first?.elementIndex == 2, "a group element is answered with its index")
        #expect(machine.backlog.map(\.taskID) == [3], "the other queued task stays")
        let next = machine.finished(run: runs[0].run, result: returned(runs[0].task, .successfully), now: at(0.3))
        #expect(started(next).map(\.task.taskID) == [3], "the cancelled task never starts")
    }

    @Test func aRunningTaskIsStoppedAndAnsweredCancelledNotWithATimeLimit() {
        var machine = connectedMachine(slots: 2)
        let runs = started(machine.received(.task([task(1, limit: 60_000), task(2)]), now: at(0.1)))
        let actions = machine.received(.cancel([1]), now: at(0.2))
        #expect(cancelledRuns(actions) == [runs[0].run], "the op's Swift task is cancelled, as at a time limit")
        #expect(results(machine.flush(now: at(0.2))).isEmpty, "a running task is answered when it returns")
        let stopped = returned(runs[0].task, .cancelled)
        _ = machine.finished(run: runs[0].run, result: stopped, now: at(0.3))
        let answer = results(machine.flush(now: at(0.3)))
        #expect(answer.map(\.taskID) == [1])
        #expect(answer.first?.finishState == .cancelled)
        #expect(answer.first?.events == stopped.events, "what the op did before it was stopped stays")
        #expect(answer.first?.output == Optional<FlowValue>.none, "a cancelled task leaves no output")
        #expect(answer.first?.elementIndex == 1)
    }

    @Test func aTaskThatFailsAsItIsStoppedIsStillAnsweredCancelled() {
        var machine = connectedMachine(slots: 1)
        let runs = started(machine.received(.task([task(1)]), now: at(0.1)))
        _ = machine.received(.cancel([1]), now: at(0.2))
        _ = machine.finished(run: runs[0].run, result: returned(runs[0].task, .withError("killed by signal 15")), now: at(0.3))
        #expect(results(machine.flush(now: at(0.3))).map(\.finishState) == [.cancelled])
    }

    @Test func aRunningTaskThatIgnoresTheCancelIsAnsweredCancelledAfterTheGraceAndItsSlotFrees() {
        var machine = connectedMachine(slots: 1)
        let runs = started(machine.received(.task([task(1), task(2)]), now: at(0.1)))
        #expect(cancelledRuns(machine.received(.cancel([1]), now: at(0.2))) == [runs[0].run])
        _ = machine.received(.heartbeat, now: at(1.1))
        #expect(started(machine.tick(now: at(1.1), date: date)).isEmpty, "within the grace the slot stays taken")
        #expect(results(machine.flush(now: at(1.1))).isEmpty)
        let freed = machine.tick(now: at(1.25), date: date)
        #expect(started(freed).map(\.task.taskID) == [2], "the grace ran out: the slot frees and the queue goes on")
        let flushed = machine.flush(now: at(1.25))
        #expect(results(flushed).map(\.taskID) == [1])
        #expect(results(flushed).map(\.finishState) == [.cancelled], "not the time-limit text")
        #expect(returnedReferences(flushed).isEmpty)
        // The op finally returns: nothing more is sent for it.
        _ = machine.finished(run: runs[0].run, result: returned(runs[0].task, .cancelled), now: at(2))
        #expect(results(machine.flush(now: at(2))).isEmpty)
    }

    @Test func anIdTheWorkerDoesNotHoldIsIgnored() {
        var machine = connectedMachine(slots: 1)
        let runs = started(machine.received(.task([task(1), task(2)]), now: at(0.1)))
        let actions = machine.received(.cancel([99]), now: at(0.2))
        #expect(cancelledRuns(actions).isEmpty)
        #expect(sent(actions).isEmpty)
        #expect(results(machine.flush(now: at(0.2))).isEmpty)
        #expect(machine.backlog.map(\.taskID) == [2])
        _ = machine.finished(run: runs[0].run, result: returned(runs[0].task, .successfully), now: at(0.3))
        #expect(results(machine.flush(now: at(0.3))).map(\.finishState) == [.successfully], "the task named nowhere runs on")
    }

    @Test func aStoppedTaskFreesItsSlotForTheQueueAndNewTasksWithoutGivingTheQueueBack() {
        var machine = connectedMachine(slots: 1)
        let runs = started(machine.received(.task([task(1), task(2)]), now: at(0.1)))
        _ = machine.received(.cancel([1]), now: at(0.2))
        let next = machine.finished(run: runs[0].run, result: returned(runs[0].task, .cancelled), now: at(0.3))
        #expect(started(next).map(\.task.taskID) == [2], "a withdrawn task is no failure to judge: the queue goes on")
        let flushed = machine.flush(now: at(0.3))
        #expect(returnedReferences(flushed).isEmpty)
        #expect(sent(flushed).map(\.command) == [.result], "no DISCONNECT: a CANCEL is not a drain")
        let later = started(machine.received(.task([task(3)]), now: at(0.4)))
        #expect(later.isEmpty, "one slot, taken by task 2")
        #expect(machine.backlog.map(\.taskID) == [3], "the worker still takes tasks")
        _ = machine.finished(run: started(next)[0].run, result: returned(task(2), .successfully), now: at(0.5))
        #expect(machine.backlog.isEmpty)
    }

    @Test func oneCancelStopsRunningAndQueuedTasksTogetherAndASecondCancelChangesNothing() {
        var machine = connectedMachine(slots: 2)
        let runs = started(machine.received(.task([task(1), task(2), task(3), task(4)]), now: at(0.1)))
        let actions = machine.received(.cancel([4, 2, 99]), now: at(0.2))
        #expect(cancelledRuns(actions) == [runs[1].run])
        #expect(results(machine.flush(now: at(0.2))).map(\.taskID) == [4])
        #expect(cancelledRuns(machine.received(.cancel([2, 4]), now: at(0.3))).isEmpty, "stopped once")
        #expect(results(machine.flush(now: at(0.3))).isEmpty, "answered once")
        _ = machine.finished(run: runs[1].run, result: returned(runs[1].task, .cancelled), now: at(0.4))
        #expect(results(machine.flush(now: at(0.4))).map(\.taskID) == [2])
        #expect(machine.backlog.isEmpty, "task 3 took the freed slot")
    }

    @Test func aCancelAfterTheTimeLimitStoppedATaskKeepsItsGraceAndAnswersCancelled() {
        var machine = connectedMachine(slots: 1)
        let runs = started(machine.received(.task([task(1, limit: 500)]), now: at(0)))
        #expect(cancelledRuns(machine.tick(now: at(0.5), date: date)) == [runs[0].run])
        #expect(cancelledRuns(machine.received(.cancel([1]), now: at(0.9))).isEmpty, "already stopped")
        _ = machine.tick(now: at(1.5), date: date)
        #expect(results(machine.flush(now: at(1.5))).map(\.finishState) == [.cancelled], "the grace counts from the first stop")
    }

    @Test func aCancelledTaskOfAnEarlierRegistrationIsNotStoppedAgain() {
        var machine = connectedMachine(slots: 1)
        _ = machine.received(.task([task(1)]), now: at(0.1))
        _ = machine.received(.disconnect(reason: "bye"), now: at(0.2))
        _ = machine.connected(now: at(0.3))
        let actions = machine.received(.cancel([1]), now: at(0.4))
        #expect(cancelledRuns(actions).isEmpty, "the old run was cancelled with its registration")
        #expect(results(machine.flush(now: at(0.4))).isEmpty)
    }
}

@Suite struct WorkerBacklogRemovalTests {
    @Test func removingTakesTheMatchingTasksInOrderAndKeepsTheRest() {
        var backlog: WorkerBacklog = [task(1), task(2), task(3), task(4)]
        _ = backlog.popFirst()
        #expect(backlog.removeAll { $0.taskID.isMultiple(of: 2) }.map(\.taskID) == [2, 4])
        #expect(backlog.map(\.taskID) == [3])
        #expect(backlog.removeAll { $0.taskID == 9 }.isEmpty)
        #expect(backlog.popFirst()?.taskID == 3)
        #expect(backlog.isEmpty)
    }
}
