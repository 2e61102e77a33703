import Flow
import FlowWire
import Foundation

extension DispatchCore {
    /// Sends every queued task a worker can take now, one TASK per worker (§8.2).
    ///
    /// Right after results were handed back, it holds off for up to `batchWindow` while the
    /// engine submits the tasks that replace them, so a burst of freed slots is refilled with one
    /// TASK instead of one per task.
    mutating func dispatch(now: Instant) -> [Action] {
        guard !holdsForSubmissions(now: now) else { return [] }
        budgetWake = nil
        guard !paused else { return [] }
        guard !queue.isEmpty, !workers.isEmpty else { return steal(now: now) }
        var turn = dispatchPlaces()
        var kept: [UInt64] = []
        var capacity = turn.capacity
        var next = queue.startIndex
        while next < queue.endIndex, capacity > 0 {
            let taskID = queue[next]
            next += 1
            switch place(taskID, in: &turn, now: now) {
            case .sent: capacity -= 1
            case .kept: kept.append(taskID)
            case .gone: break
            }
        }
        kept.append(contentsOf: queue[next...])
        queue = kept
        let messages = taskMessages(turn, now: now)
        return firstShares(turn, now: now) + messages + steal(now: now)
    }

    /// Whether dispatch waits, up to `batchWindow` after results were handed back, for the tasks
    /// the engine submits in their place; once they came or the window is over it does not.
    private mutating func holdsForSubmissions(now: Instant) -> Bool {
        if expectedSubmissions > 0 {
            if holdUntil == nil { holdUntil = now + configuration.batchWindow }
            if let holdUntil, now < holdUntil { return true }
        }
        expectedSubmissions = 0
        holdUntil = nil
        return false
    }

    /// What became of a queued task in a dispatch turn.
    private enum Placement {
        /// Put in a worker's TASK.
        case sent
        /// It stays queued: its group is paused, no worker may take it, or its budget holds it.
        case kept
        /// It is no longer a task (finished or cancelled meanwhile): it leaves the queue.
        case gone
    }

    /// Puts a queued task in the TASK of its ``bestPlace(group:avoid:in:)``, if any.
    @inline(__always)
    private mutating func place(_ taskID: UInt64, in turn: inout DispatchTurn, now: Instant) -> Placement {
        guard let slot = tasks.index(forKey: taskID) else { return .gone }
        // Read in place, for the same reason as the workers (``DispatchTurn``).
        let (group, op, avoid, budget, required) = withTask(at: slot) { ($0.group, $0.task.op, $0.avoid, $0.budget, $0.task.placement) }
        if let group, pausedGroups.contains(group.id) { return .kept }
        if budget >= 0, turn.heldBudgets.contains(budget) { return .kept }
        let preference = withTask(at: slot) { $0.task.preference }
        let placement = preference.isEmpty ? required : placement(required, preferring: preference)
        askOffers(op, placement: placement, in: &turn)
        guard let position = bestPlace(group: group, avoid: avoid, in: turn) else { return .kept }
        guard budget < 0 || mayStart(budget: budget, now: now) else {
            turn.heldBudgets.insert(budget)
            return .kept
        }
        let task = assign(taskID, at: slot, group: group, to: position, in: &turn, now: now)
        if turn.batches[position].isEmpty { turn.order.append(position) }
        turn.batches[position].append(prepared(task, for: turn.places[position]))
        return .sent
    }

    /// Records a task as sent to the place at `position` now and returns its TASK: the worker's
    /// in-flight set, its group's bound, the task's worker and send time, and for a timed try its
    /// clock (§8.9).
    @inline(__always)
    private mutating func assign(_ taskID: UInt64, at slot: Dictionary<UInt64, TaskRecord>.Index, group: TaskGroupLimit?,
                                 to position: Int, in turn: inout DispatchTurn, now: Instant) -> WireTask {
        let place = turn.places[position]
        turn.places[position].inFlight += 1
        // In place: a copy of the worker taken out and put back would copy its in-flight set.
        if withWorker(at: place.index, { $0.take(taskID, group: group?.id) }), let group {
            groupBound[group.id, default: 0] += 1
        }
        // A pool keeps the time limits of what it is sent itself (§14): it may hold a task
        // before a worker starts it.
        let timed = !place.isPool
        let peer = turn.peers[position]
        let task = withTask(at: slot) { record in
            record.worker = peer
            record.sentAt = now
            record.unofferedSince = nil
            if timed, record.task.timeLimitMilliseconds > 0 {
                record.startClock(now: now, queuedAhead: place.queuedAhead, freed: place.freed)
            }
            return record.task
        }
        if timed, task.timeLimitMilliseconds > 0 { timedTasks.insert(taskID) }
        return task
    }

    /// The TASK entry as a worker with `features` reads it: one that did not announce op attempts
    /// (§7.1) sees attempt 1, one that did not announce retry policies gets none, nor a budget one
    /// that did not announce progress (§15), nor a checkpoint one that did not announce checkpoints
    /// (§7.9).
    @inline(__always)
    private func prepared(_ task: WireTask, for place: Place) -> WireTask {
        let features = place.features
        var task = task
        // A worker is never told where it may run (§14.4): only a pool that places tasks itself is.
        if !task.placement.isEmpty, !place.takesPlacement { task.placement = [] }
        if !task.preference.isEmpty, !place.takesPlacement { task.preference = [] }
        if task.operationAttempt > 1, features & WireReady.Feature.operationAttempt == 0 { task.operationAttempt = 1 }
        if task.retry != nil, features & WireReady.Feature.retryPolicy == 0 { task.retry = nil }
        if task.budget != nil, features & WireReady.Feature.progress == 0 { task.budget = nil }
        if case .some = task.checkpoint, features & WireReady.Feature.checkpoint == 0 { task.checkpoint = .none }
        return task
    }

    /// One TASK to each worker that got tasks this turn, in the order they got their first, and
    /// a dispatched report for each task that is not a group's element.
    private mutating func taskMessages(_ turn: DispatchTurn, now: Instant) -> [Action] {
        var actions: [Action] = []
        for position in turn.order {
            let place = turn.places[position]
            withWorker(at: place.index) { $0.lastSent = now }
            let batch = turn.batches[position]
            actions.append(.send(to: turn.peers[position], .task(batch)))
            for task in batch where !task.isGroupElement {
                actions.append(.report(.dispatched(op: task.op, worker: place.name)))
            }
        }
        return actions
    }

    /// Work stealing (§8.2): when a slot has been free for `stealAfter` with nothing to dispatch,
    /// it takes over tasks that wait in another worker's queue, so the end of a group does not
    /// wait behind one worker's queue while another idles. The newest tasks of the longest queues
    /// (a worker starts its queue in arrival order) are recalled, at most as many as slots are
    /// free, and only those an idle worker that offers their op could start at once (their
    /// group's bound has room); what comes back RETURNED is dispatched again. One that started
    /// meanwhile just runs.
    mutating func steal(now: Instant) -> [Action] {
        var free = -stealing
        var holders: [(peer: Data, queued: Int)] = []
        if queue.isEmpty {
            for (peer, worker) in workers {
                if worker.takesTasks { free += max(0, worker.free) }
                if worker.queued > 0 { holders.append((peer, worker.queued)) }
            }
        }
        guard free > 0, !holders.isEmpty else {
            idleSince = nil
            return []
        }
        let since = idleSince ?? now
        idleSince = since
        guard now - since >= configuration.stealAfter else { return [] }
        idleSince = nil
        holders.sort { $0.queued != $1.queued ? $0.queued > $1.queued : $0.peer.lexicographicallyPrecedes($1.peer) }
        var actions: [Action] = []
        for holder in holders where free > 0 {
            guard let inFlight = workers[holder.peer]?.inFlight else { continue }
            // Ids and send times are sorted, not whole task records: moving records (through
            // their generic value witnesses) while sorting a worker's few hundred tasks cost more
            // than the rest of a steal (callgrind).
            var candidates: [(id: UInt64, sentAt: Instant)] = []
            candidates.reserveCapacity(inFlight.count)
            for id in inFlight {
                guard let record = tasks[id], record.group != nil, !record.stolen, let sentAt = record.sentAt else { continue }
                candidates.append((id, sentAt))
            }
            candidates.sort { $0.sentAt != $1.sentAt ? $0.sentAt > $1.sentAt : $0.id > $1.id }
            var ids: [UInt64] = []
            for (id, _) in candidates.prefix(holder.queued) where free > 0 {
                guard let record = tasks[id], let group = record.group else { continue }
                let (op, placement) = (record.task.op, record.task.placement)
                guard !pausedGroups.contains(group.id), groupBound[group.id, default: 0] < group.limit,
                      workers.contains(where: { $0.key != holder.peer && $0.value.takesTasks && $0.value.free > 0
                                                  && $0.value.offers(op, placement: placement) }) else { continue }
                withTask(id) { $0.stolen = true }
                stealing += 1
                free -= 1
                ids.append(id)
            }
            if !ids.isEmpty { actions.append(.send(to: holder.peer, .recall(ids.sorted()))) }
        }
        return actions
    }

    /// Fails tasks that waited longer than the worker time-out for a worker offering their op.
    mutating func failUnoffered(now: Instant) -> [Action] {
        var actions: [Action] = []
        var kept: [UInt64] = []
        kept.reserveCapacity(queue.count)
        // Asked once per op a tick, and each record changed in place: the queue can hold a
        // group's `maxConcurrent` tasks.
        var offeredOps: [OfferKey: Bool] = [:]
        var waiting: [OfferKey: (tasks: Int, limit: Duration)] = [:]
        for taskID in queue {
            guard let index = tasks.index(forKey: taskID) else { continue }
            let key = withTask(at: index) { OfferKey(op: $0.task.op, placement: $0.task.placement) }
            let offered: Bool
            if let known = offeredOps[key] {
                offered = known
            } else {
                offered = workers.values.contains { $0.takesTasks && $0.offers(key.op, placement: key.placement) }
                offeredOps[key] = offered
            }
            let workerTimeout = configuration.workerTimeout
            let (since, waiter, limit) = withTask(at: index) { record -> (Instant?, Waiter?, Duration) in
                if offered {
                    record.unofferedSince = nil
                    return (nil, nil, .zero)
                }
                let since = record.unofferedSince ?? now
                record.unofferedSince = since
                return (since, record.waiter, record.task.placementWait ?? workerTimeout)
            }
            if since != nil, !key.placement.isEmpty { waiting[key, default: (0, limit)].tasks += 1 }
            if let since, now - since >= limit, let waiter {
                let record = tasks.remove(at: index).value
                let lost = workers.lost.filter { $0.ops.contains(record.task.op) }
                let error = !key.placement.isEmpty && workers.values.contains(where: { $0.takesTasks && $0.offers(key.op) })
                    ? ClusterError.noWorkerHasLabels(op: key.op, labels: key.placement.map { "\($0.key)=\($0.value)" }.joined(separator: ", "),
                                                     waited: now - since, workers: workers.values.map(\.name).sorted())
                    : lost.isEmpty
                    ? ClusterError.noWorkerOffers(op: record.task.op, waited: now - since, connectedWorkers: workers.count)
                    : ClusterError.workersLost(op: record.task.op, lost: lost.map(\.name), lastReason: lost.last?.reason ?? "",
                                               waited: now - since)
                actions += finish(waiter, .failure(error, wire: record.task))
                continue
            }
            kept.append(taskID)
        }
        queue = kept
        return actions + reportWaits(waiting)
    }

    /// Says once which labels placed tasks wait for (a host that is gone: `affinity: source` after
    /// a restart, or a resumed run missing a host), while the other tasks go on; said again after
    /// such a worker came and went.
    private mutating func reportWaits(_ waiting: [OfferKey: (tasks: Int, limit: Duration)]) -> [Action] {
        reportedWaits = reportedWaits.filter { waiting[$0] != nil }
        var actions: [Action] = []
        for (key, wait) in waiting.sorted(by: { $0.key.placement.lexicographicallyPrecedes($1.key.placement) }) where !reportedWaits.contains(key) {
            reportedWaits.insert(key)
            actions.append(.report(.waitingForLabels(labels: key.placement.map { "\($0.key)=\($0.value)" }.joined(separator: ", "), op: key.op,
                                                     tasks: wait.tasks, timeout: wait.limit)))
        }
        return actions
    }
}

extension FlowTaskResult {
    /// A failure for a TASK that never produced a RESULT, named, indexed and numbered as the task is.
    static func failure(_ error: any Error, wire task: WireTask) -> FlowTaskResult {
        var result = FlowTaskResult.failure(error, operationName: task.op, attempt: Int(task.operationAttempt))
        result.groupIndex = task.isGroupElement ? task.elementIndex : nil
        return result
    }

    /// The cancelled outcome of a TASK the engine no longer wants.
    static func cancelled(wire task: WireTask) -> FlowTaskResult {
        var result = failure(CancellationError(), wire: task)
        result.state = .cancelled
        return result
    }
}
