import Flow
import FlowWire
import Foundation

extension CoordinatorStateMachine {
    /// Sends every queued task a worker can take now, one TASK per worker (§8.2).
    ///
    /// Right after results were handed back, it holds off for up to `batchWindow` while the
    /// engine submits the tasks that replace them, so a burst of freed slots is refilled with one
    /// TASK instead of one per task.
    mutating func dispatch(now: Instant) -> [Action] {
        if expectedSubmissions > 0 {
            if holdUntil == nil { holdUntil = now + configuration.batchWindow }
            if let holdUntil, now < holdUntil { return [] }
        }
        expectedSubmissions = 0
        holdUntil = nil
        budgetWake = nil
        guard !paused else { return [] }
        guard !queue.isEmpty, !workers.isEmpty else { return steal(now: now) }
        var peers = workers.keys.sorted { $0.lexicographicallyPrecedes($1) }
        let shift = rotation % peers.count
        peers = Array(peers[shift...] + peers[..<shift])
        rotation &+= 1
        // The workers by position in `peers`, each looked up and read once a turn: a task looks at
        // every worker, and reading a field through `workers.values[i]` copies the whole worker
        // (its sets and names retained and released), twelve copies a task (callgrind: most of
        // dispatch's cost). What a task taken changes, its count in flight, is kept here too.
        var places = peers.map { Place(index: workers.index(forKey: $0)!, worker: workers[$0]!) }
        var batches = [[WireTask]](repeating: [], count: peers.count)
        var order: [Int] = []
        var offers = (op: "", by: [Bool]())
        var kept: [UInt64] = []
        // Once every worker is full (its slots and its queue), the rest of the queue waits without
        // a look: a group of 100,000 on 2 workers of 4 slots otherwise had each turn look at all of
        // its up to `maxConcurrent` waiting tasks to place a few (126 µs of coordinator CPU a task).
        var capacity = places.reduce(0) { $0 + ($1.takesTasks ? max(0, $1.slots + $1.queueDepth - $1.inFlight) : 0) }
        var next = queue.startIndex
        while next < queue.endIndex, capacity > 0 {
            let taskID = queue[next]
            next += 1
            guard let slot = tasks.index(forKey: taskID) else { continue }
            // Read in place, for the same reason as the workers.
            let (group, op, avoid, budget) = withTask(at: slot) { ($0.group, $0.task.op, $0.avoid, $0.budget) }
            if let group, pausedGroups.contains(group.id) {
                kept.append(taskID)
                continue
            }
            if op != offers.op || offers.by.isEmpty { offers = (op, places.map { withWorker(at: $0.index) { $0.offers(op) } }) }
            // The worker that offers the op with the most free slots, preferring one that has not
            // failed this task before; rotation breaks ties. With no free slot anywhere, a task
            // of a group may wait in the queue of a worker that keeps one (§8.2), the shortest.
            var best: Int?
            var bestScore = (fresh: 0, free: 0, room: 0)
            for position in places.indices where offers.by[position] {
                let place = places[position]
                guard place.takesTasks else { continue }
                let free = place.inFlight < place.slots
                if !free, group == nil || max(0, place.inFlight - place.slots) >= place.queueDepth { continue }
                // The group's bound must stay within its limit: a free slot would raise it, and so
                // would a queue place on a worker with fewer of the group's tasks than slots.
                if let group, groupBound[group.id, default: 0] >= group.limit,
                   free || withWorker(at: place.index, { $0.groupTasks[group.id, default: 0] }) < place.slots {
                    continue
                }
                let avoided = !avoid.isEmpty && avoid.contains(place.name)
                let score = (fresh: avoided ? 0 : 1, free: free ? 1 : 0,
                             room: free ? place.slots - place.inFlight : place.queueDepth - max(0, place.inFlight - place.slots))
                if best == nil || score > bestScore {
                    best = position
                    bestScore = score
                }
            }
            guard let position = best, budget < 0 || mayStart(budget: budget, now: now) else {
                kept.append(taskID)
                continue
            }
            capacity -= 1
            let index = places[position].index
            // Negative on a free slot, else how many wait in the worker's queue before this one.
            let queuedAhead = places[position].inFlight - places[position].slots
            let freed = places[position].freed
            places[position].inFlight += 1
            // In place: a copy of the worker taken out and put back would copy its in-flight set.
            if workers.values[index].take(taskID, group: group?.id), let group {
                groupBound[group.id, default: 0] += 1
            }
            if batches[position].isEmpty { order.append(position) }
            // A pool keeps the time limits of what it is sent itself (§14): it may hold a task
            // before a worker starts it.
            let timed = !places[position].isPool
            var task = withTask(at: slot) { record in
                record.worker = peers[position]
                record.sentAt = now
                record.unofferedSince = nil
                if timed, record.task.timeLimitMilliseconds > 0 { record.startClock(now: now, queuedAhead: queuedAhead, freed: freed) }
                return record.task
            }
            if timed, task.timeLimitMilliseconds > 0 { timedTasks.insert(taskID) }
            // A worker that did not announce it gets no op attempt (§7.1): its op sees 1.
            let features = places[position].features
            if task.operationAttempt > 1, features & WireReady.Feature.operationAttempt == 0 { task.operationAttempt = 1 }
            if task.retry != nil, features & WireReady.Feature.retryPolicy == 0 { task.retry = nil }
            batches[position].append(task)
        }
        kept.append(contentsOf: queue[next...])
        queue = kept
        var actions: [Action] = []
        for position in order {
            workers.values[places[position].index].lastSent = now
            let batch = batches[position]
            actions.append(.send(to: peers[position], .task(batch)))
            let name = places[position].name
            for task in batch where !task.isGroupElement {
                actions.append(.report(.dispatched(op: task.op, worker: name)))
            }
        }
        return actions + steal(now: now)
    }

    /// What ``dispatch(now:)`` reads of a worker, once a turn.
    private struct Place {
        let index: Dictionary<Data, Worker>.Index
        let name: String
        let slots: Int
        var inFlight: Int
        let queueDepth: Int
        let takesTasks: Bool
        let features: UInt32
        let freed: UInt64
        let isPool: Bool

        init(index: Dictionary<Data, Worker>.Index, worker: Worker) {
            self.index = index
            name = worker.name
            slots = worker.slots
            inFlight = worker.inFlight.count
            queueDepth = worker.queueDepth
            takesTasks = worker.takesTasks
            features = worker.features
            freed = worker.freed
            isPool = worker.isPool
        }
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
                let op = record.task.op
                guard !pausedGroups.contains(group.id), groupBound[group.id, default: 0] < group.limit,
                      workers.contains(where: { $0.key != holder.peer && $0.value.takesTasks && $0.value.free > 0
                                                  && $0.value.offers(op) }) else { continue }
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
        var offeredOps: [String: Bool] = [:]
        for taskID in queue {
            guard let index = tasks.index(forKey: taskID) else { continue }
            let op = withTask(at: index) { $0.task.op }
            let offered: Bool
            if let known = offeredOps[op] {
                offered = known
            } else {
                offered = workers.values.contains { $0.takesTasks && $0.offers(op) }
                offeredOps[op] = offered
            }
            let (since, waiter) = withTask(at: index) { record -> (Instant?, Waiter?) in
                if offered {
                    record.unofferedSince = nil
                    return (nil, nil)
                }
                let since = record.unofferedSince ?? now
                record.unofferedSince = since
                return (since, record.waiter)
            }
            if let since, now - since >= configuration.workerTimeout, let waiter {
                let record = tasks.remove(at: index).value
                let error = ClusterError.noWorkerOffers(op: record.task.op, waited: now - since, connectedWorkers: workers.count)
                actions += finish(waiter, .failure(error, wire: record.task))
                continue
            }
            kept.append(taskID)
        }
        queue = kept
        return actions
    }
}

extension FlowTaskResult {
    /// A failure for a TASK that never produced a RESULT, named and indexed as the task is.
    static func failure(_ error: any Error, wire task: WireTask) -> FlowTaskResult {
        var result = FlowTaskResult.failure(error, operationName: task.op)
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
