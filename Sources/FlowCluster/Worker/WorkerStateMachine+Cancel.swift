import FlowWire
import Foundation
import Logging

/// CANCEL (a pool's, feature bit 3): the coordinator no longer wants some tasks.
extension WorkerStateMachine {
    /// Drops or stops the named tasks of this registration: each one still queued is answered
    /// `cancelled` at once; each one running is stopped as a time limit stops it (``Action/cancel(run:)``)
    /// and answered `cancelled` when it returns, or after `stopGrace` if it does not. Ids this
    /// worker does not hold are ignored. Unlike a drain (§8.8), the worker goes on taking tasks,
    /// and unlike a failure nothing queued goes back: the coordinator withdrew these tasks.
    mutating func cancel(_ ids: [UInt64], now: Instant) -> [Action] {
        let named = Set(ids)
        let dropped = dropQueued(named)
        var actions: [Action] = []
        var stopped = 0
        for id in runs.keys.sorted() {
            guard let run = runs[id], run.generation == generation, named.contains(run.task.taskID), !run.isCancelled else { continue }
            stopped += 1
            actions += stop(run: id, now: now)
        }
        let held = dropped + stopped
        let text = held == 0
            ? "CANCEL named \(named.count) task(s) this worker does not hold: ignored"
            : "CANCEL: answered \(dropped) queued task(s) cancelled, stopping \(stopped) running task(s)"
        actions.append(.log(held == 0 ? .debug : .info, text, [:]))
        return actions
    }

    /// Takes the named tasks out of the queue and answers each `cancelled`.
    ///
    /// - Returns: how many it took.
    private mutating func dropQueued(_ named: Set<UInt64>) -> Int {
        // Times of a task never run: the coordinator reads nothing from them.
        let date = Date(timeIntervalSince1970: 0)
        let dropped = backlog.removeAll { named.contains($0.taskID) }
        for task in dropped { outbox.append(Self.cancelledResult(task, date: date)) }
        return dropped.count
    }

    /// Marks a running task cancelled and stops it, unless its time limit already did (then its
    /// stop grace runs on from then, and only its answer changes to `cancelled`).
    private mutating func stop(run id: UInt64, now: Instant) -> [Action] {
        guard let run = runs[id] else { return [] }
        runs[id]?.isCancelled = true
        guard run.stoppedAt == nil else { return [] }
        if !run.isWatched { watchedRuns += 1 }
        runs[id]?.stoppedAt = now
        return [.cancel(run: id)]
    }

    /// A stopped run still running after the stop grace (the op ignores cancellation): answered
    /// for, `cancelled` if a CANCEL stopped it and with its time limit otherwise, and its slot
    /// freed. Its late return is then dropped (``finished(run:result:now:)`` no longer knows it).
    mutating func answerForUnstopped(run id: UInt64, now: Instant, date: Date) -> [Action] {
        guard let run = runs.removeValue(forKey: id) else { return [] }
        watchedRuns -= 1
        runningCount -= 1
        let why = run.isCancelled ? "of being cancelled" : "of its time limit"
        let log = Action.log(.warning, "a task did not stop within \(configuration.stopGrace) \(why): answered for it", Self.metadata(run.task))
        if run.isCancelled {
            return [log] + answered(Self.cancelledResult(run.task, events: [], startedAt: date, finishedAt: date), now: now, givesQueueBack: false)
        }
        return [log] + answered(Self.timeLimitResult(run.task, events: [], startedAt: date, finishedAt: date), now: now)
    }
}
