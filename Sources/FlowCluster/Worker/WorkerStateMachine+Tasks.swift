import Flow
import FlowWire
import Foundation
import Logging

extension WorkerStateMachine {
    /// Starts what fits in the free slots and queues the rest (up to `slots` more is the protocol's
    /// queue, §8.2; beyond that a coordinator bug, logged); a draining worker gives every task
    /// back as `cancelled`, so the coordinator runs it elsewhere (§8.8).
    mutating func accept(_ tasks: [WireTask], now: Instant) -> [Action] {
        if isDraining {
            // Times of a task never run: the coordinator reads nothing from them.
            let date = Date(timeIntervalSince1970: 0)
            for task in tasks { outbox.append(Self.cancelledResult(task, date: date)) }
            return []
        }
        var actions: [Action] = []
        var queued = 0
        for task in tasks {
            if runningCount < configuration.slots {
                actions.append(start(task, now: now))
            } else {
                backlog.append(task)
                queued += 1
            }
        }
        if backlog.count > configuration.slots, queued > 0 {
            // §8.2: the queue holds up to `slots` more; beyond that a coordinator bug, still
            // queued, never dropped.
            actions.append(.log(.warning, "\(backlog.count) task(s) wait for a slot, more than the \(configuration.slots) "
                + "the coordinator may queue here: queued", [:]))
        }
        return actions
    }

    /// A run's slot freed with `result` to send: the next queued task starts, unless the run
    /// failed. A failure may end its group, so what waits here goes back to the coordinator
    /// (after the RESULT), which starts none of the group's tasks until it has judged it (§8.2).
    ///
    /// - Parameter givesQueueBack: `false` for a task a CANCEL stopped: the coordinator withdrew
    ///   it and has nothing to judge, so the queue stays and the next task starts.
    mutating func answered(_ result: WireResult, now: Instant, givesQueueBack: Bool = true) -> [Action] {
        outbox.append(result)
        if givesQueueBack, !result.finishState.isSuccess { giveBack { _ in true } }
        return startFromBacklog(now: now)
    }

    /// Gives back the queued tasks that match, unrun: they leave in the next RETURNED.
    mutating func giveBack(where matches: (WireTask) -> Bool) {
        for task in backlog.removeAll(where: matches) {
            returned.append(WireTaskReference(taskID: task.taskID, attempt: task.attempt))
        }
    }

    mutating func start(_ task: WireTask, now: Instant) -> Action {
        nextRun += 1
        let deadline = task.timeLimitMilliseconds > 0 ? now + .milliseconds(Int64(task.timeLimitMilliseconds)) : nil
        runs[nextRun] = Run(task: Header(task), generation: generation, deadline: deadline)
        if deadline != nil { watchedRuns += 1 }
        runningCount += 1
        return .start(run: nextRun, task)
    }

    mutating func startFromBacklog(now: Instant) -> [Action] {
        var actions: [Action] = []
        while !isDraining, runningCount < configuration.slots, let task = backlog.popFirst() {
            actions.append(start(task, now: now))
        }
        return actions
    }

    /// Forgets the registration's tasks (§8.7): the running ones are cancelled and their results
    /// will be dropped; queued ones and unsent results are discarded.
    ///
    /// - Parameter coordinatorSaidGoodbye: log at info, not warning: the coordinator ended the
    ///   registration itself (DISCONNECT), so the tasks it cancels are its own decision, seen and
    ///   reported on its side (a run stopped with Ctrl-C, a coordinator that restarted), not a
    ///   fault of this worker's. A local run's workers log at warning, so a Ctrl-C no longer
    ///   prints a line from each of them.
    mutating func endRegistration(because reason: String, coordinatorSaidGoodbye: Bool = false) -> [Action] {
        let abandoned = runs.filter { $0.value.generation == generation }.keys.sorted()
        generation += 1
        runningCount = 0
        backlog = []
        outbox = []
        returned = []
        var actions: [Action] = coordinatorSaidGoodbye || abandoned.isEmpty ? [] : [.coordinatorLost(runs: abandoned)]
        actions += abandoned.map { .cancel(run: $0) }
        let text = abandoned.isEmpty ? reason : reason + "; cancelled \(abandoned.count) running task(s)"
        actions.append(.log(coordinatorSaidGoodbye ? .info : .warning, text, [:]))
        return actions
    }

    static func metadata(_ task: Header) -> Logger.Metadata {
        ["task.id": "\(task.taskID)", "task.attempt": "\(task.attempt)", "task.op": "\(task.op.escapingControlCharacters)"]
    }

    static func timeLimitText(_ task: Header) -> String {
        FlowTimeLimitExceeded(limit: .milliseconds(Int64(task.timeLimitMilliseconds))).description
    }

    /// The answer for a task stopped at its time limit: a transient failure, keeping every event
    /// the op produced before it was stopped, as the in-process executor (`FlowLocalExecutor`)
    /// does, so a flow reads the same whether the op ran here or there.
    static func timeLimitResult(_ task: Header, events: [WireEvent], startedAt: Date, finishedAt: Date) -> WireResult {
        WireResult(taskID: task.taskID, attempt: task.attempt, finishState: .withError(timeLimitText(task)), startedAt: startedAt,
                   finishedAt: finishedAt, events: events, elementIndex: task.elementIndex)
    }

    /// A task given back unrun.
    static func cancelledResult(_ task: WireTask, date: Date) -> WireResult {
        WireResult(taskID: task.taskID, attempt: task.attempt, finishState: .cancelled, startedAt: date, finishedAt: date,
                   elementIndex: task.isGroupElement ? task.elementIndex : nil)
    }

    /// The answer for a running task a CANCEL stopped: `cancelled`, keeping the events the op
    /// produced before it was stopped, and no output.
    static func cancelledResult(_ task: Header, events: [WireEvent], startedAt: Date, finishedAt: Date) -> WireResult {
        WireResult(taskID: task.taskID, attempt: task.attempt, finishState: .cancelled, startedAt: startedAt, finishedAt: finishedAt,
                   events: events, elementIndex: task.elementIndex)
    }
}
