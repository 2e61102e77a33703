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
        guard !queue.isEmpty, !workers.isEmpty else { return steal(now: now) }
        var peers = workers.keys.sorted { $0.lexicographicallyPrecedes($1) }
        let shift = rotation % peers.count
        peers = Array(peers[shift...] + peers[..<shift])
        rotation &+= 1
        // The workers by position in `peers`, each looked up once a turn: a task looks at every
        // worker, and hashing a worker's identity for each look (and a task's op against each
        // worker's ops) was most of a turn's cost at 256 slots a worker.
        let places = peers.map { workers.index(forKey: $0)! }
        var batches = [[WireTask]](repeating: [], count: peers.count)
        var order: [Int] = []
        var offers = (op: "", by: [Bool]())
        var kept: [UInt64] = []
        // Once every worker is full (its slots and its queue), the rest of the queue waits without
        // a look: a group of 100,000 on 2 workers of 4 slots otherwise had each turn look at all of
        // its up to `maxConcurrent` waiting tasks to place a few (126 µs of coordinator CPU a task).
        var capacity = workers.values.reduce(0) { $0 + ($1.stopping ? 0 : max(0, $1.slots + $1.queueDepth - $1.inFlight.count)) }
        var next = queue.startIndex
        while next < queue.endIndex, capacity > 0 {
            let taskID = queue[next]
            next += 1
            guard let slot = tasks.index(forKey: taskID) else { continue }
            let group = tasks.values[slot].group
            if let group, pausedGroups.contains(group.id) {
                kept.append(taskID)
                continue
            }
            let op = tasks.values[slot].task.op
            if op != offers.op || offers.by.isEmpty { offers = (op, places.map { workers.values[$0].ops.contains(op) }) }
            // The worker that offers the op with the most free slots, preferring one that has not
            // failed this task before; rotation breaks ties. With no free slot anywhere, a task
            // of a group may wait in the queue of a worker that keeps one (§8.2), the shortest.
            var best: Int?
            var bestScore = (fresh: 0, free: 0, room: 0)
            for position in places.indices where offers.by[position] {
                let place = places[position]
                guard !workers.values[place].stopping else { continue }
                let slots = workers.values[place].slots
                let inFlight = workers.values[place].inFlight.count
                let queueDepth = workers.values[place].queueDepth
                let free = inFlight < slots
                if !free, group == nil || max(0, inFlight - slots) >= queueDepth { continue }
                // The group's bound must stay within its limit: a free slot would raise it, and so
                // would a queue place on a worker with fewer of the group's tasks than slots.
                if let group, groupBound[group.id, default: 0] >= group.limit,
                   free || workers.values[place].groupTasks[group.id, default: 0] < slots {
                    continue
                }
                let avoided = !tasks.values[slot].avoid.isEmpty && tasks.values[slot].avoid.contains(workers.values[place].name)
                let score = (fresh: avoided ? 0 : 1, free: free ? 1 : 0,
                             room: free ? slots - inFlight : queueDepth - max(0, inFlight - slots))
                if best == nil || score > bestScore {
                    best = position
                    bestScore = score
                }
            }
            guard let position = best else {
                kept.append(taskID)
                continue
            }
            capacity -= 1
            let place = places[position]
            // In place: a copy of the worker taken out and put back would copy its in-flight set.
            if workers.values[place].take(taskID, group: group?.id), let group {
                groupBound[group.id, default: 0] += 1
            }
            tasks.values[slot].worker = peers[position]
            tasks.values[slot].sentAt = now
            tasks.values[slot].unofferedSince = nil
            if batches[position].isEmpty { order.append(position) }
            var task = tasks.values[slot].task
            // A worker that did not announce it gets no op attempt (§7.1): its op sees 1.
            let features = workers.values[place].features
            if task.operationAttempt > 1, features & WireReady.Feature.operationAttempt == 0 { task.operationAttempt = 1 }
            if task.retry != nil, features & WireReady.Feature.retryPolicy == 0 { task.retry = nil }
            batches[position].append(task)
        }
        kept.append(contentsOf: queue[next...])
        queue = kept
        var actions: [Action] = []
        for position in order {
            let place = places[position]
            workers.values[place].lastSent = now
            let batch = batches[position]
            actions.append(.send(to: peers[position], .task(batch)))
            let name = workers.values[place].name
            for task in batch where !task.isGroupElement {
                actions.append(.report(.dispatched(op: task.op, worker: name)))
            }
        }
        return actions + steal(now: now)
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
                if !worker.stopping { free += max(0, worker.free) }
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
                      workers.contains(where: { $0.key != holder.peer && !$0.value.stopping && $0.value.free > 0
                                                  && $0.value.ops.contains(op) }) else { continue }
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
        for taskID in queue {
            guard var record = tasks[taskID] else { continue }
            let offered = workers.values.contains { !$0.stopping && $0.ops.contains(record.task.op) }
            if offered {
                record.unofferedSince = nil
            } else {
                let since = record.unofferedSince ?? now
                record.unofferedSince = since
                if now - since >= configuration.workerTimeout, let waiter = record.waiter {
                    tasks[taskID] = nil
                    let error = ClusterError.noWorkerOffers(op: record.task.op, waited: now - since, connectedWorkers: workers.count)
                    actions += finish(waiter, .failure(error, wire: record.task))
                    continue
                }
            }
            tasks[taskID] = record
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
