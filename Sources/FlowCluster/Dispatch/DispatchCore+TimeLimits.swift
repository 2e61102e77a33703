import Flow
import FlowWire
import Foundation

/// Time limits on the coordinator's side (§8.9): a worker stops a try at its time limit and
/// answers for it, so a try still unanswered well past the limit means a worker that took the
/// task and will not answer (it may still heartbeat). The coordinator fails that try, so the
/// step's `retry` can run it elsewhere, and stops giving tasks to a worker that does so often.
extension DispatchCore {
    /// How long past its start a try may go unanswered: its time limit plus a grace of a tenth of
    /// it, and at least `answerGrace`, which is more than the second a worker takes to answer for
    /// an op that ignores being stopped (§8.3), and the way back.
    func answerDeadline(limit: Duration) -> Duration {
        limit + max(configuration.answerGrace, limit / 10)
    }

    /// Fails every try whose worker has left it unanswered past ``answerDeadline(limit:)``; a
    /// worker that has left `unansweredBeforeQuarantine` so gets no more tasks.
    ///
    /// A task's clock starts when it was sent to a free slot. One sent into the worker's queue
    /// starts its clock once the worker has freed as many slots as there were tasks before it
    /// (a RESULT, or a try failed here): later than the worker started it, never earlier, so an
    /// honest worker always answers first.
    mutating func failUnanswered(now: Instant) -> [Action] {
        guard !timedTasks.isEmpty else { return [] }
        var overdue: [UInt64] = []
        for taskID in timedTasks {
            guard let index = tasks.index(forKey: taskID) else { continue }
            let (peer, since, startsWhenFreed, limit) = withTask(at: index) {
                ($0.worker, $0.runningSince, $0.startsWhenFreed, $0.task.timeLimitMilliseconds)
            }
            guard let peer else { continue }
            var start = since
            if start == nil, let freed = withWorker(peer, { $0.freed }), freed >= startsWhenFreed {
                start = now
                withTask(at: index) { $0.runningSince = now }
            }
            if let start, now - start >= answerDeadline(limit: .milliseconds(Int64(limit))) { overdue.append(taskID) }
        }
        var actions: [Action] = []
        var silentWorkers: [Data] = []
        for taskID in overdue.sorted() {
            guard case let (peer, failed)? = failUnanswered(taskID, now: now) else { continue }
            actions += failed
            if !silentWorkers.contains(peer) { silentWorkers.append(peer) }
        }
        // Once every overdue try is failed, so each is reported as such.
        let threshold = configuration.unansweredBeforeQuarantine
        for peer in silentWorkers where withWorker(peer, { !$0.quarantined && $0.unansweredCount >= threshold }) == true {
            actions += quarantine(peer, now: now)
        }
        return actions
    }

    /// Fails one try left unanswered: its worker's slot counts as freed, a late RESULT for it is
    /// discarded (``discarded(taskID:attempt:from:)``), and the engine gets a transient failure
    /// naming the worker, which `retry` runs again on another worker.
    ///
    /// - Returns: the worker and the actions; `nil` for a task no longer on a worker.
    private mutating func failUnanswered(_ taskID: UInt64, now: Instant) -> (Data, [Action])? {
        guard let peer = tasks[taskID]?.worker, var record = tasks.removeValue(forKey: taskID) else { return nil }
        release(&record, from: peer, freesSlot: true)
        let name = withWorker(peer) { worker -> String in
            worker.unanswered.insert(taskID)
            worker.unansweredCount += 1
            return worker.name
        } ?? "?"
        let task = record.task
        let limit = Duration.milliseconds(Int64(task.timeLimitMilliseconds))
        let waited = record.runningSince.map { now - $0 } ?? .zero
        var actions: [Action] = [.report(.taskUnanswered(worker: name, op: task.op, element: task.isGroupElement ? task.elementIndex : nil,
                                                         limit: limit, waited: waited))]
        if let waiter = record.waiter {
            var result = FlowTaskResult.failure(ClusterError.unanswered(limit: limit, worker: name), wire: task)
            result.worker = name
            // The try as it was, for the timeline: from when it went to the worker.
            if let sentAt = record.sentAt { result.startedAt = result.finishedAt.addingTimeInterval(-(now - sentAt).seconds) }
            holdUntil = holdUntil ?? now + configuration.batchWindow
            finishInGroup(record, .finish(waiter, result), succeeded: false, into: &actions)
        }
        return (peer, actions)
    }

    /// Gives a worker no more tasks: it left `unansweredBeforeQuarantine` tries unanswered. Its
    /// registration stays (it heartbeats; a DISCONNECT would only make it register again), and the
    /// tasks in flight on it go to other workers as a lost worker's do (§8.6).
    private mutating func quarantine(_ peer: Data, now: Instant) -> [Action] {
        guard case let (name, count)? = withWorker(peer, { worker -> (String, Int) in
            worker.quarantined = true
            return (worker.name, worker.unansweredCount)
        }) else { return [] }
        let reason = "it left \(count) tries unanswered past their time limits"
        let (requeued, actions) = takeAway(from: peer, reason: reason, now: now)
        return [.report(.workerQuarantined(name: name, unanswered: count, requeued: requeued))] + actions
    }
}

extension DispatchCore.TaskRecord {
    /// Starts the time-limit clock of a task just sent (§8.9): at once on a free slot; one that
    /// waits in the worker's queue behind `queuedAhead` others starts when the worker has freed
    /// one slot more than that.
    ///
    /// - Parameters:
    ///   - queuedAhead: how many tasks wait in the worker's queue before it; negative on a free slot.
    ///   - freed: the worker's count of freed slots now (``DispatchCore/Worker/freed``).
    mutating func startClock(now: ContinuousClock.Instant, queuedAhead: Int, freed: UInt64) {
        guard queuedAhead >= 0 else {
            runningSince = now
            return
        }
        runningSince = nil
        startsWhenFreed = freed + UInt64(queuedAhead + 1)
    }
}
