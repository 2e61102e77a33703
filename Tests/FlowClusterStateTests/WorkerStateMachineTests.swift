import Flow
import FlowWire
import Foundation
import Logging
import Testing
@testable import FlowCluster

private let t0 = ContinuousClock.now
private let date = Date(timeIntervalSince1970: 1_000)

private func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .microseconds(Int64(seconds * 1_000_000)) }

private typealias WorkerMachine = WorkerStateMachine

private func machine(slots: Int = 2) -> WorkerMachine {
    let ready = WireReady(workerName: "w1", slotCount: UInt32(slots), ops: ["EchoOp"], hostname: "h", processID: 1)
    return WorkerMachine(configuration: .init(ready: ready, slots: slots, heartbeatInterval: .seconds(1), liveness: 3,
                                        stopGrace: .seconds(1)), now: at(0))
}

private func task(_ id: UInt64, limit: UInt32 = 0) -> WireTask {
    WireTask(taskID: id, op: "EchoOp", groupElement: .integer(Int64(id)), elementIndex: Int(id), timeLimitMilliseconds: limit)
}

private func ok(_ task: WireTask) -> WireResult {
    WireResult(taskID: task.taskID, attempt: task.attempt, finishState: .successfully, startedAt: date, finishedAt: date,
               elementIndex: task.elementIndex, output: .integer(1))
}

private func sent(_ actions: [WorkerMachine.Action]) -> [WireMessage] {
    actions.compactMap { if case .send(let message) = $0 { return message } else { return nil } }
}

private func started(_ actions: [WorkerMachine.Action]) -> [(UInt64, WireTask)] {
    actions.compactMap { if case .start(let run, let task) = $0 { return (run, task) } else { return nil } }
}

private func cancelled(_ actions: [WorkerMachine.Action]) -> [UInt64] {
    actions.compactMap { if case .cancel(let run) = $0 { return run } else { return nil } }
}

private func results(_ actions: [WorkerMachine.Action]) -> [WireResult] {
    sent(actions).flatMap { if case .result(let results) = $0 { return results } else { return [] } }
}

private func logs(_ actions: [WorkerMachine.Action]) -> [(level: Logger.Level, message: String, metadata: Logger.Metadata)] {
    actions.compactMap { if case .log(let level, let message, let metadata) = $0 { return (level, message, metadata) } else { return nil } }
}

private func reconnects(_ actions: [WorkerMachine.Action]) -> Bool {
    actions.contains { if case .reconnect = $0 { true } else { false } }
}

@Suite struct WorkerStateMachineTests {
    @Test func readyGoesFirstOnEveryConnection() {
        var machine = machine()
        let actions = machine.connected(now: at(0))
        guard case .ready(let ready)? = sent(actions).first else {
            Issue.record("expected READY, got \(actions)")
            return
        }
        #expect(ready.workerName == "w1")
        #expect(sent(actions).count == 1)
    }

    @Test func aHeartbeatGoesOutAfterAnIntervalOfSilenceAndNotBefore() {
        var machine = machine()
        _ = machine.connected(now: at(0))
        #expect(sent(machine.tick(now: at(0.5), date: date)).isEmpty)
        _ = machine.received(.heartbeat, now: at(0.9))
        #expect(sent(machine.tick(now: at(1.0), date: date)) == [.heartbeat])
        #expect(sent(machine.tick(now: at(1.5), date: date)).isEmpty, "a heartbeat was just sent")
    }

    @Test func tasksBeyondTheSlotsWaitAndStartAsSlotsFree() {
        var machine = machine(slots: 2)
        _ = machine.connected(now: at(0))
        let actions = machine.received(.task([task(1), task(2), task(3)]), now: at(0.1))
        let runs = started(actions)
        #expect(runs.map(\.1.taskID) == [1, 2])
        #expect(machine.backlog.map(\.taskID) == [3])
        let next = machine.finished(run: runs[0].0, result: ok(runs[0].1), now: at(0.2))
        #expect(started(next).map(\.1.taskID) == [3])
    }

    @Test func finishedResultsLeaveTogetherInOneResult() {
        var machine = machine(slots: 3)
        _ = machine.connected(now: at(0))
        let runs = started(machine.received(.task([task(1), task(2), task(3)]), now: at(0.1)))
        for (run, task) in runs { _ = machine.finished(run: run, result: ok(task), now: at(0.2)) }
        let flushed = sent(machine.flush(now: at(0.2)))
        #expect(flushed.count == 1)
        #expect(results(machine.flush(now: at(0.3))).isEmpty, "nothing left to send, and never an empty RESULT")
        guard case .result(let batch)? = flushed.first else { return }
        #expect(batch.map(\.taskID).sorted() == [1, 2, 3])
    }

    /// CURVE failures are silent: a coordinator that never answers READY gets a hint, on the 1st,
    /// 2nd, 4th, 8th… unanswered connection in a row, so a long wait does not fill the log. Each
    /// silence makes a new socket at once (it says READY again); no wait without a socket, in which
    /// a coordinator that starts could not find the worker. One answer resets the count.
    @Test func aCoordinatorThatNeverAnswersIsHintedAtLessAndLessOftenAndRetriedAtOnce() {
        var machine = machine()
        func hinted(_ actions: [WorkerMachine.Action]) -> Bool {
            actions.contains { if case .log(.warning, let text, _) = $0 { text == "no answer from the coordinator (still trying)" } else { false } }
        }
        var now = 0.0
        var hints: [Int] = []
        for connection in 1...9 {
            #expect(sent(machine.connected(now: at(now))).map(\.command) == [.ready])
            now += 3.5
            let actions = machine.tick(now: at(now), date: date)
            #expect(reconnects(actions), "connection \(connection): \(actions)")
            #expect(!logs(actions).contains { $0.message.contains("silent") }, "nothing was registered on it: \(logs(actions))")
            if hinted(actions) { hints.append(connection) }
        }
        #expect(hints == [1, 2, 4, 8])
        // Heard once: the next silence is a lost coordinator, warned about at once.
        _ = machine.connected(now: at(now))
        _ = machine.received(.heartbeat, now: at(now + 0.5))
        let actions = machine.tick(now: at(now + 4), date: date)
        #expect(!hinted(actions))
        #expect(reconnects(actions))
        #expect(logs(actions).contains { $0.level == .warning && $0.message.hasPrefix("the coordinator was silent for") })
        // And the count starts again: the first unanswered connection after it is hinted, as a
        // coordinator that went silent (its key was right: it answered).
        _ = machine.connected(now: at(now + 4))
        let again = machine.tick(now: at(now + 7.5), date: date)
        #expect(!hinted(again))
        #expect(logs(again).contains { $0.level == .warning && $0.message.hasPrefix("no answer from the coordinator, which answered before") })
    }

    /// A partition after the coordinator was heard: the worker keeps saying, less and less often,
    /// that the coordinator is silent, worded for that case (the network or the coordinator is
    /// down), never that its key may be wrong, which the coordinator's answers disproved.
    @Test func aCoordinatorSilentAfterAnsweringIsHintedAtAsDownNotAsAWrongKey() {
        var machine = machine()
        func hint(_ actions: [WorkerMachine.Action]) -> String? {
            logs(actions).first { $0.level == .warning && $0.message.hasPrefix("no answer from the coordinator") }?.message
        }
        _ = machine.connected(now: at(0))
        _ = machine.received(.heartbeat, now: at(0.5))
        // The partition: a silence ends the registration, then no connection is answered.
        let lost = machine.tick(now: at(4), date: date)
        #expect(logs(lost).contains { $0.message.hasPrefix("the coordinator was silent for") })
        var now = 4.0
        var hinted: [Int] = []
        for connection in 1...9 {
            _ = machine.connected(now: at(now))
            now += 3.5
            let actions = machine.tick(now: at(now), date: date)
            #expect(reconnects(actions))
            if let text = hint(actions) {
                hinted.append(connection)
                #expect(text == "no answer from the coordinator, which answered before: the network or the coordinator is down (still trying)")
            }
        }
        #expect(hinted == [1, 2, 4, 8])
        // A worker whose coordinator never answered still hears of its key.
        var fresh = self.machineNeverAnswered()
        _ = fresh.connected(now: at(0))
        #expect(hint(fresh.tick(now: at(3.5), date: date)) == "no answer from the coordinator (still trying)")
    }

    private func machineNeverAnswered() -> WorkerMachine { machine() }

    /// A standing worker between two runs: the coordinator said DISCONNECT when it stopped. The
    /// worker makes a new socket at once, so its READY waits for the next coordinator instead of
    /// reaching the stopping one, and waiting for that coordinator, however long, is no warning.
    @Test func afterAGoodbyeTheWorkerWaitsForTheNextCoordinatorQuietlyOnANewSocket() {
        var machine = machine()
        _ = machine.connected(now: at(0))
        _ = machine.received(.heartbeat, now: at(0.5))
        let goodbye = machine.received(.disconnect(reason: "coordinator stopping"), now: at(1))
        #expect(reconnects(goodbye), "READY must go out on a new socket: \(goodbye)")
        #expect(!sent(goodbye).contains { $0.command == .ready }, "not on the socket to the stopping coordinator")
        #expect(logs(goodbye).allSatisfy { $0.level == .info }, "\(logs(goodbye))")
        var now = 1.0
        for _ in 0..<20 {
            #expect(sent(machine.connected(now: at(now))).map(\.command) == [.ready])
            now += 3.5
            let actions = machine.tick(now: at(now), date: date)
            #expect(reconnects(actions))
            #expect(!logs(actions).contains { $0.level >= .warning }, "\(logs(actions))")
        }
        // The next coordinator answers: it is not hinted at, and a later silence is a loss again.
        _ = machine.connected(now: at(now))
        #expect(machine.received(.heartbeat, now: at(now + 0.2)).isEmpty)
        #expect(logs(machine.tick(now: at(now + 4), date: date)).contains { $0.level == .warning })
    }

    @Test func aSilentCoordinatorEndsTheRegistrationAndItsResultsAreDropped() {
        var machine = machine()
        _ = machine.connected(now: at(0))
        let runs = started(machine.received(.task([task(1)]), now: at(0.1)))
        let actions = machine.tick(now: at(3.2), date: date)
        #expect(cancelled(actions) == runs.map(\.0))
        // Nobody ended it: a warning.
        #expect(logs(actions).contains { $0.0 == .warning && $0.1.hasSuffix("; cancelled 1 running task(s)") }, "\(logs(actions))")
        #expect(reconnects(actions))
        _ = machine.connected(now: at(4.2))
        _ = machine.finished(run: runs[0].0, result: ok(runs[0].1), now: at(4.3))
        #expect(results(machine.flush(now: at(4.3))).isEmpty, "a result of the old registration must not be sent")
    }

    @Test func disconnectFromTheCoordinatorReRegistersAndDropsRunningResults() {
        var machine = machine()
        _ = machine.connected(now: at(0))
        let runs = started(machine.received(.task([task(1)]), now: at(0.1)))
        let actions = machine.received(.disconnect(reason: "unknown worker"), now: at(0.2))
        #expect(cancelled(actions) == runs.map(\.0))
        #expect(reconnects(actions), "registers again on a new socket")
        #expect(sent(machine.connected(now: at(0.2))).map(\.command) == [.ready])
        // The coordinator ended it: said at info, not as a warning of this worker's.
        #expect(logs(actions).map { "\($0.0) \($0.1)" }.first == "info the coordinator said DISCONNECT (unknown worker); cancelled 1 running task(s)")
        #expect(!logs(actions).contains { $0.0 == .warning })
        _ = machine.finished(run: runs[0].0, result: ok(runs[0].1), now: at(0.3))
        #expect(results(machine.flush(now: at(0.3))).isEmpty)
    }

    /// The running count is kept, not counted: a late result of an earlier registration must not
    /// free a slot of the new one.
    @Test func aLateResultOfAnEarlierRegistrationFreesNoSlot() {
        var machine = machine(slots: 1)
        _ = machine.connected(now: at(0))
        let old = started(machine.received(.task([task(1)]), now: at(0.1)))
        #expect(machine.runningCount == 1)
        _ = machine.received(.disconnect(reason: "unknown worker"), now: at(0.2))
        #expect(machine.runningCount == 0)
        let new = started(machine.received(.task([task(2), task(3)]), now: at(0.3)))
        #expect(new.map(\.1.taskID) == [2] && machine.runningCount == 1)
        // Task 1's result arrives late: dropped, and task 3 still waits for task 2's slot.
        #expect(started(machine.finished(run: old[0].0, result: ok(old[0].1), now: at(0.4))).isEmpty)
        #expect(machine.runningCount == 1 && machine.backlog.map(\.taskID) == [3])
        #expect(started(machine.finished(run: new[0].0, result: ok(new[0].1), now: at(0.5))).map(\.1.taskID) == [3])
        #expect(machine.runningCount == 1)
    }

    @Test func drainingGivesNewTasksBackFinishesRunningOnesThenDisconnectsAndStops() {
        var machine = machine(slots: 1)
        _ = machine.connected(now: at(0))
        let runs = started(machine.received(.task([task(1)]), now: at(0.1)))
        _ = machine.drain(now: at(0.2), date: date)
        _ = machine.received(.task([task(2)]), now: at(0.3))
        let givenBack = machine.flush(now: at(0.3))
        #expect(results(givenBack).map(\.taskID) == [2])
        #expect(results(givenBack).first?.finishState == .cancelled)
        #expect(!givenBack.contains { if case .stop = $0 { true } else { false } }, "task 1 still runs")
        _ = machine.finished(run: runs[0].0, result: ok(runs[0].1), now: at(0.5))
        let last = machine.flush(now: at(0.5))
        #expect(sent(last).map(\.command) == [.result, .disconnect])
        #expect(results(last).first?.finishState == .successfully)
        #expect(last.contains { if case .stop = $0 { true } else { false } })
    }

    @Test func aTaskPastItsTimeLimitIsCancelledAndAnsweredWithTheLimit() {
        var machine = machine()
        _ = machine.connected(now: at(0))
        let runs = started(machine.received(.task([task(1, limit: 300)]), now: at(0)))
        #expect(cancelled(machine.tick(now: at(0.2), date: date)).isEmpty)
        #expect(cancelled(machine.tick(now: at(0.31), date: date)) == runs.map(\.0))
        var late = ok(runs[0].1)
        late.finishState = .cancelled
        late.events = [WireEvent(time: date, kind: .log("working")), WireEvent(time: date, kind: .set(key: "k", value: 1))]
        _ = machine.finished(run: runs[0].0, result: late, now: at(0.4))
        let answer = results(machine.flush(now: at(0.4)))
        #expect(answer.first?.finishState == .withError("time limit of 300 ms exceeded"))
        #expect(answer.first?.isPermanent == false)
        #expect(answer.first?.elementIndex == 1)
        #expect(answer.first?.events == late.events, "what the op did before it was stopped stays")
    }

    /// §15.2: a task's PROGRESS goes before its RESULT, also when the worker answers it without
    /// its op (a time limit its op did not heed within 1 s): what the op reported is taken as the
    /// RESULT goes, and only then.
    @Test func progressGoesBeforeTheResultOfATaskAnsweredWithoutItsOp() {
        var machine = machine()
        _ = machine.connected(now: at(0))
        _ = machine.received(.heartbeat, now: at(0))
        let runs = started(machine.received(.task([task(1, limit: 300)]), now: at(0)))
        #expect(cancelled(machine.tick(now: at(0.31), date: date)) == runs.map(\.0))
        var asked = 0
        let reported = [WireProgress(taskID: 1, attempt: 1, bytes: 4096)]
        // Nothing to answer yet: the ops' progress stays where it is.
        #expect(sent(machine.flush(now: at(0.5)) { asked += 1; return reported }).isEmpty)
        #expect(asked == 0)
        // The op never returns: the tick answers for it, and its progress goes first.
        _ = machine.tick(now: at(1.4), date: date)
        let flushed = sent(machine.flush(now: at(1.4)) { asked += 1; return reported })
        #expect(asked == 1)
        #expect(flushed.map(\.command) == [.progress, .result])
        guard case .progress(let entries)? = flushed.first else { return }
        #expect(entries == reported)
    }

    /// §9.2, §15.2: CANCEL and RATE use features a worker announces; one that did not drops them
    /// (a RATE's request-rate entries alone, with bit 4 but not 5), says so once, and goes on.
    @Test func messagesForFeaturesNotAnnouncedAreDroppedAndSaidOnce() {
        func rates(_ actions: [WorkerMachine.Action]) -> [WireRate]? {
            for case .setRates(let rates) in actions { return rates }
            return nil
        }
        func warnings(_ actions: [WorkerMachine.Action]) -> Int { logs(actions).filter { $0.level == .warning }.count }
        let bytes = WireRate(budget: 0, bytesPerSecond: 1_000)
        let requests = WireRate.requests(budget: 0, perMille: 5_000)
        // No bit 3, no bit 4: CANCEL and RATE are dropped, each said once.
        var bare = machine()
        _ = bare.connected(now: at(0))
        let runs = started(bare.received(.task([task(1)]), now: at(0)))
        let firstCancel = bare.received(.cancel([1]), now: at(0.1))
        #expect(cancelled(firstCancel).isEmpty && warnings(firstCancel) == 1)
        #expect(warnings(bare.received(.cancel([1]), now: at(0.2))) == 0)
        let firstRate = bare.received(.rate([bytes]), now: at(0.3))
        #expect(rates(firstRate) == nil && warnings(firstRate) == 1)
        #expect(bare.received(.rate([bytes]), now: at(0.4)).isEmpty)
        #expect(results(bare.finished(run: runs[0].0, result: ok(runs[0].1), now: at(0.5)) + bare.flush(now: at(0.5))).count == 1,
                "the task runs on, to its result")
        // Bit 4 without bit 5: the bytes entries apply, the request-rate entries are ignored.
        let ready = WireReady(workerName: "w2", features: WireReady.Feature.cancel | WireReady.Feature.progress, slotCount: 2,
                              ops: ["EchoOp"], hostname: "h", processID: 1)
        var budgets = WorkerMachine(configuration: .init(ready: ready, slots: 2), now: at(0))
        _ = budgets.connected(now: at(0))
        let mixed = budgets.received(.rate([bytes, requests]), now: at(0.1))
        #expect(rates(mixed) == [bytes] && warnings(mixed) == 1)
        let again = budgets.received(.rate([bytes, requests]), now: at(0.2))
        #expect(rates(again) == [bytes] && warnings(again) == 0)
        #expect(rates(budgets.received(.rate([bytes]), now: at(0.3))) == [bytes])
        let started2 = started(budgets.received(.task([task(2)]), now: at(0.4)))
        #expect(cancelled(budgets.received(.cancel([2]), now: at(0.5))) == started2.map(\.0), "bit 3 announced: CANCEL stops the task")
    }

    @Test func anOpThatSucceedsAsItIsStoppedKeepsItsSuccessAsInProcess() {
        var machine = machine()
        _ = machine.connected(now: at(0))
        let runs = started(machine.received(.task([task(1, limit: 300)]), now: at(0)))
        #expect(cancelled(machine.tick(now: at(0.3), date: date)) == runs.map(\.0))
        _ = machine.finished(run: runs[0].0, result: ok(runs[0].1), now: at(0.31))
        #expect(results(machine.flush(now: at(0.31))).map(\.finishState) == [.successfully])
    }

    @Test func aTimeLimitOfWholeSecondsIsReportedInSeconds() {
        var machine = machine()
        _ = machine.connected(now: at(0))
        let runs = started(machine.received(.task([task(1, limit: 300_000)]), now: at(0)))
        _ = machine.received(.heartbeat, now: at(299.9))
        #expect(cancelled(machine.tick(now: at(299.9), date: date)).isEmpty)
        _ = machine.received(.heartbeat, now: at(300))
        #expect(cancelled(machine.tick(now: at(300), date: date)) == runs.map(\.0))
        var stopped = ok(runs[0].1)
        stopped.finishState = .cancelled
        _ = machine.finished(run: runs[0].0, result: stopped, now: at(300.1))
        #expect(results(machine.flush(now: at(300.1))).map(\.finishState) == [.withError("time limit of 300 s exceeded")])
    }

    @Test func tasksBeyondTheSlotsAreLoggedOnceAtWarningPerTaskMessage() {
        var machine = machine(slots: 1)
        _ = machine.connected(now: at(0))
        let actions = machine.received(.task([task(1), task(2), task(3)]), now: at(0.1))
        let warnings = logs(actions).filter { $0.level == .warning }
        #expect(warnings.count == 1, "\(actions)")
        #expect(machine.backlog.map(\.taskID) == [2, 3])
        #expect(logs(machine.received(.task([task(4)]), now: at(0.2))).filter { $0.level == .warning }.count == 1)
    }

    @Test func anUnexpectedReadyOrResultFromTheCoordinatorIsDroppedAndLogged() {
        var machine = machine()
        _ = machine.connected(now: at(0))
        let ready = WireReady(workerName: "x", slotCount: 1, ops: ["EchoOp"], hostname: "h", processID: 2)
        for message in [WireMessage.ready(ready), .result([ok(task(9))])] {
            let actions = machine.received(message, now: at(0.1))
            #expect(sent(actions).isEmpty && started(actions).isEmpty, "\(actions)")
            #expect(logs(actions).count == 1)
        }
        #expect(results(machine.flush(now: at(0.2))).isEmpty)
    }

    @Test func aMalformedMessageIsLoggedWithItsDecodingError() {
        var machine = machine()
        _ = machine.connected(now: at(0))
        let line = logs(machine.receivedMalformed("truncated body at offset 7", now: at(0.1))).first
        #expect(line?.message.contains("truncated body at offset 7") == true)
        #expect(logs(machine.receivedMalformed("again", now: at(1.2))).count == 1, "a second later it may log again")
    }

    @Test func aCoordinatorOfAnotherVersionIsNamedOnceAMinuteAndNeverCountsAsHeard() {
        var machine = machine()
        _ = machine.connected(now: at(0))
        let line = logs(machine.receivedOtherVersion("FLOW01", said: "unsupported protocol version FLOW02", now: at(0.1))).first
        #expect(line?.level == .error)
        #expect(line?.message.contains("speaks protocol version FLOW01, this worker speaks FLOW02 (it said: unsupported protocol version FLOW02)")
            == true, "\(line?.message ?? "")")
        #expect(logs(machine.receivedOtherVersion("FLOW01", said: nil, now: at(30))).isEmpty, "once a minute")
        #expect(logs(machine.receivedOtherVersion("FLOW01", said: nil, now: at(60.2))).count == 1)
        // It never answered in our version: past the liveness the worker connects anew (and says READY again).
        #expect(reconnects(machine.tick(now: at(3.01), date: date)))
    }

    @Test func theCoordinatorIsAliveUntilLivenessIntervalsOfSilence() {
        var machine = machine()
        _ = machine.connected(now: at(0))
        #expect(!reconnects(machine.tick(now: at(3.0), date: date)))
        #expect(reconnects(machine.tick(now: at(3.01), date: date)))
        #expect(sent(machine.connected(now: at(4.1))).map(\.command) == [.ready], "the shell reconnects and READY goes first")
    }

    @Test func aSilentCoordinatorAlsoDiscardsTheBacklog() {
        var machine = machine(slots: 1)
        _ = machine.connected(now: at(0))
        let runs = started(machine.received(.task([task(1), task(2)]), now: at(0.1)))
        _ = machine.tick(now: at(3.2), date: date)
        _ = machine.connected(now: at(4.2))
        #expect(started(machine.finished(run: runs[0].0, result: ok(runs[0].1), now: at(4.3))).isEmpty,
                "the queued task belonged to the lost registration")
        #expect(machine.backlog.isEmpty)
    }

    @Test func disconnectWhileDrainingStopsInsteadOfRegisteringAgain() {
        var machine = machine()
        _ = machine.connected(now: at(0))
        let runs = started(machine.received(.task([task(1)]), now: at(0.1)))
        _ = machine.drain(now: at(0.2), date: date)
        let actions = machine.received(.disconnect(reason: "coordinator stopping"), now: at(0.3))
        #expect(cancelled(actions) == runs.map(\.0))
        #expect(sent(actions).isEmpty, "no READY, and DISCONNECT is never answered")
        #expect(actions.contains { if case .stop = $0 { true } else { false } })
    }

    @Test func drainingGivesTheBacklogBackCancelled() {
        var machine = machine(slots: 1)
        _ = machine.connected(now: at(0))
        _ = machine.received(.task([task(1), task(2)]), now: at(0.1))
        _ = machine.drain(now: at(0.2), date: date)
        let flushed = results(machine.flush(now: at(0.2)))
        #expect(flushed.map(\.taskID) == [2])
        #expect(flushed.map(\.finishState) == [.cancelled])
        #expect(flushed.first?.startedAt == date, "result times come from the shell")
    }

    @Test func aDrainingWorkerWhoseCoordinatorGoesSilentSaysDisconnectAndStops() {
        var machine = machine()
        _ = machine.connected(now: at(0))
        let runs = started(machine.received(.task([task(1)]), now: at(0.1)))
        _ = machine.drain(now: at(0.2), date: date)
        let actions = machine.tick(now: at(3.2), date: date)
        #expect(cancelled(actions) == runs.map(\.0))
        // Nobody ended it: a warning.
        #expect(logs(actions).contains { $0.0 == .warning && $0.1.hasSuffix("; cancelled 1 running task(s)") }, "\(logs(actions))")
        #expect(!reconnects(actions))
        #expect(sent(actions).map(\.command) == [.disconnect])
        #expect(actions.contains { if case .stop = $0 { true } else { false } })
    }

    @Test func aWorkerWithNoOpsIsRefusedBeforeItCanSendAnEmptyReady() {
        // It throws before making any socket: a READY without op names is malformed (§7.1).
        let error = #expect(throws: ClusterError.self) {
            try FlowWorker(configuration: .init(endpoint: "tcp://127.0.0.1:9"), registry: FlowOperationRegistry(), logger: Logger(label: "test"))
        }
        #expect(error.map { "\($0)" }?.contains("at least one op") == true)
    }

    @Test func logsCarryTheTaskInMetadataNotInTheText() {
        var machine = machine(slots: 1)
        _ = machine.connected(now: at(0))
        let runs = started(machine.received(.task([task(5, limit: 100)]), now: at(0)))
        let stop = logs(machine.tick(now: at(0.1), date: date))
        #expect(stop.first?.metadata["task.id"] == "5")
        #expect(stop.first?.metadata["task.attempt"] == "1")
        #expect(stop.first?.metadata["task.op"] == "EchoOp")
        #expect(stop.first?.message.contains("5") == false)
        _ = runs
    }

    @Test func anOpThatIgnoresCancellationIsAnsweredForAfterTheGraceAndItsSlotFrees() {
        var machine = machine(slots: 1)
        _ = machine.connected(now: at(0))
        let runs = started(machine.received(.task([task(1, limit: 2_000), task(2)]), now: at(0)))
        #expect(runs.map(\.1.taskID) == [1])
        _ = machine.received(.heartbeat, now: at(2.0))
        _ = machine.tick(now: at(2.0), date: date)
        _ = machine.received(.heartbeat, now: at(2.9))
        #expect(results(machine.tick(now: at(2.9), date: date)).isEmpty)
        let freed = machine.tick(now: at(3.05), date: date)
        #expect(started(freed).isEmpty, "a failure: the queued task goes back to the coordinator (WorkerQueueTests)")
        #expect(results(machine.flush(now: at(3.05))).map(\.finishState) == [.withError("time limit of 2 s exceeded")])
        #expect(started(machine.received(.task([task(3)]), now: at(3.1))).map(\.1.taskID) == [3], "the slot is free")
        // The op finally returns: nothing more is sent for it.
        _ = machine.finished(run: runs[0].0, result: ok(runs[0].1), now: at(4))
        #expect(results(machine.flush(now: at(4))).isEmpty)
    }

    @Test func aMalformedMessageCountsAsLifeAndIsLoggedAtMostOnceASecond() {
        var machine = machine()
        _ = machine.connected(now: at(0))
        #expect(machine.receivedMalformed("truncated", now: at(2.5)).count == 1)
        #expect(machine.receivedMalformed("truncated", now: at(2.6)).isEmpty)
        #expect(!machine.tick(now: at(3.5), date: date).contains { if case .reconnect = $0 { true } else { false } })
    }

    /// A message whose frame 0 is not FLOW at all is no sign of the coordinator (§8.5): the worker
    /// hears nothing from it and reconnects as it would.
    @Test func aMessageThatIsNotFlowAtAllIsNoSignOfLife() {
        var machine = machine()
        _ = machine.connected(now: at(0))
        #expect(machine.receivedMalformed("wrong protocol frame", signOfLife: false, now: at(2.5)).count == 1)
        #expect(machine.tick(now: at(3.5), date: date).contains { if case .reconnect = $0 { true } else { false } })
    }
}

/// The worker's queue (feature bit 2, PROTOCOL.md §8.2): up to `slots` tasks wait beyond the
/// slots without a warning, start as slots free, and go back to the coordinator unrun (RETURNED)
/// when a task fails or a RECALL names them.
@Suite struct WorkerQueueTests {
    private func returned(_ actions: [WorkerMachine.Action]) -> [WireTaskReference] {
        sent(actions).flatMap { if case .returned(let references) = $0 { return references } else { return [] } }
    }

    @Test func aQueueOfUpToTheSlotCountIsNoViolation() {
        var machine = machine(slots: 2)
        _ = machine.connected(now: at(0))
        let actions = machine.received(.task([task(1), task(2), task(3), task(4)]), now: at(0.1))
        #expect(started(actions).map(\.1.taskID) == [1, 2])
        #expect(machine.backlog.map(\.taskID) == [3, 4])
        #expect(logs(actions).filter { $0.level == .warning }.isEmpty, "\(actions)")
        let beyond = machine.received(.task([task(5)]), now: at(0.2))
        #expect(logs(beyond).filter { $0.level == .warning }.count == 1, "a third queued task is beyond the queue")
    }

    @Test func aRecallGivesBackOnlyTheNamedTasksStillQueued() {
        var machine = machine(slots: 1)
        _ = machine.connected(now: at(0))
        var second = task(2)
        second.attempt = 3
        _ = machine.received(.task([task(1), second, task(3)]), now: at(0.1))
        // 1 runs, 2 and 3 wait; 1 cannot be given back, 99 is not here.
        #expect(machine.received(.recall([1, 2, 99]), now: at(0.2)).isEmpty)
        #expect(machine.backlog.map(\.taskID) == [3])
        #expect(returned(machine.flush(now: at(0.2))) == [WireTaskReference(taskID: 2, attempt: 3)])
        #expect(returned(machine.flush(now: at(0.3))).isEmpty, "never an empty RETURNED")
    }

    @Test func aFailedTaskSendsItsResultThenGivesTheWholeQueueBackAndStartsNothing() {
        var machine = machine(slots: 1)
        _ = machine.connected(now: at(0))
        let runs = started(machine.received(.task([task(1), task(2), task(3)]), now: at(0.1)))
        let failure = WireResult(taskID: 1, attempt: 1, finishState: .withError("boom"), startedAt: date, finishedAt: date,
                                 elementIndex: 1)
        let after = machine.finished(run: runs[0].0, result: failure, now: at(0.2))
        #expect(started(after).isEmpty, "nothing starts after a failure: the coordinator judges it first")
        #expect(machine.backlog.isEmpty)
        let flushed = sent(machine.flush(now: at(0.2)))
        #expect(flushed.map(\.command) == [.result, .returned], "the failure first, then what it gave back")
        #expect(returned(flushed.map { .send($0) }).map(\.taskID) == [2, 3])
    }

    @Test func aTaskAnsweredForAtItsTimeLimitAlsoGivesTheQueueBack() {
        var machine = machine(slots: 1)
        _ = machine.connected(now: at(0))
        _ = machine.received(.task([task(1, limit: 100), task(2)]), now: at(0))
        #expect(cancelled(machine.tick(now: at(0.2), date: date)).count == 1, "stopped at its limit")
        _ = machine.received(.heartbeat, now: at(1.0))
        // The op ignores the cancel: past the grace the machine answers for it.
        let answered = machine.tick(now: at(1.3), date: date)
        #expect(started(answered).isEmpty, "nothing starts after a failure")
        let flushed = sent(machine.flush(now: at(1.3)))
        #expect(flushed.map(\.command) == [.result, .returned])
        #expect(returned(flushed.map { .send($0) }).map(\.taskID) == [2])
    }

    @Test func aSuccessStartsTheNextQueuedTaskAtOnce() {
        var machine = machine(slots: 1)
        _ = machine.connected(now: at(0))
        let runs = started(machine.received(.task([task(1), task(2)]), now: at(0.1)))
        let next = machine.finished(run: runs[0].0, result: ok(runs[0].1), now: at(0.2))
        #expect(started(next).map(\.1.taskID) == [2])
        #expect(returned(machine.flush(now: at(0.2))).isEmpty)
    }
}
