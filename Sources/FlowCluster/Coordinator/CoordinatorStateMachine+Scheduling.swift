import Foundation
import FlowWire

extension CoordinatorStateMachine {
    mutating func register(_ ready: WireReady, peer: Data, now: Double) -> [Action] {
        workers[peer] = Worker(name: ready.workerName, ops: Set(ready.ops), slots: Int(ready.slotCount),
                               lastReceived: now, lastSent: now,
                               heartbeatInterval: Double(max(1, ready.heartbeatIntervalMilliseconds)) / 1000)
        return [.report(.workerJoined(name: ready.workerName, host: ready.hostname, slots: Int(ready.slotCount),
                                      ops: ready.ops.count))] + dispatch(now: now)
    }

    /// Why a worker left the cluster.
    enum RemovalReason {
        case lost(silentFor: Double)
        case left(String)
        case reregistered
    }

    /// Drops a worker; its running tasks go back to the front of the queue for another worker.
    mutating func remove(_ peer: Data, reason: RemovalReason, now: Double) -> [Action] {
        guard let worker = workers.removeValue(forKey: peer) else { return [] }
        var actions: [Action] = []
        var requeued: [Pending] = []
        for taskID in worker.inFlight.sorted() {
            guard let assignment = inFlight.removeValue(forKey: taskID) else { continue }
            if cancelledInFlight.remove(taskID) != nil { continue }
            var task = assignment.task
            if case .lost = reason, task.attempt >= configuration.maxAttempts {
                actions.append(.fail(taskID: taskID, .quarantined(op: task.op, attempts: Int(task.attempt), lastWorker: worker.name)))
                continue
            }
            task.attempt += 1
            requeued.append(Pending(task: task))
        }
        pending.insert(contentsOf: requeued, at: 0)
        switch reason {
        case .lost(let silence):
            actions.insert(.report(.workerLost(name: worker.name, silentFor: silence, requeued: requeued.count)), at: 0)
        case .left(let text):
            actions.insert(.report(.workerLeft(name: worker.name, reason: text, requeued: requeued.count)), at: 0)
        case .reregistered:
            actions.insert(.report(.workerLeft(name: worker.name, reason: "reconnected", requeued: requeued.count)), at: 0)
        }
        return actions
    }

    /// Accepts a RESULT once: from the worker and attempt the task was given to.
    mutating func accept(_ result: WireResult, from peer: Data, workerName: String) -> [Action] {
        guard let assignment = inFlight[result.taskID], assignment.worker == peer,
              assignment.task.attempt == result.attempt else {
            return [.report(.staleResult(worker: workerName, taskID: result.taskID))]
        }
        inFlight[result.taskID] = nil
        workers[peer]?.inFlight.remove(result.taskID)
        if cancelledInFlight.remove(result.taskID) != nil { return [] }
        return [.complete(taskID: result.taskID, result: result, worker: workerName)]
    }

    /// Sends every queued task a worker can take now, one TASK batch per worker.
    mutating func dispatch(now: Double) -> [Action] {
        guard !pending.isEmpty, !workers.isEmpty else { return [] }
        var peers = workers.keys.sorted { $0.lexicographicallyPrecedes($1) }
        if !peers.isEmpty {
            let shift = rotation % peers.count
            peers = Array(peers[shift...] + peers[..<shift])
            rotation &+= 1
        }
        var batches: [Data: [WireTask]] = [:]
        var order: [Data] = []
        var kept: [Pending] = []
        kept.reserveCapacity(pending.count)
        for var item in pending {
            // The worker with the most free slots that offers the op; rotation breaks ties.
            var best: Data?
            var bestFree = 0
            var offered = false
            for peer in peers {
                guard let worker = workers[peer], worker.ops.contains(item.task.op) else { continue }
                offered = true
                if worker.free > bestFree {
                    best = peer
                    bestFree = worker.free
                }
            }
            guard let peer = best else {
                if !offered, item.waitingForOfferSince == nil { item.waitingForOfferSince = now }
                if offered { item.waitingForOfferSince = nil }
                kept.append(item)
                continue
            }
            workers[peer]?.inFlight.insert(item.task.taskID)
            inFlight[item.task.taskID] = Assignment(worker: peer, task: item.task)
            if batches[peer] == nil { order.append(peer) }
            batches[peer, default: []].append(item.task)
        }
        pending = kept
        var actions: [Action] = []
        for peer in order {
            workers[peer]?.lastSent = now
            let batch = batches[peer]!
            actions.append(.send(to: peer, .task(batch)))
            for task in batch where task.groupElement == nil {
                actions.append(.report(.dispatched(op: task.op, worker: workers[peer]?.name ?? "?")))
            }
        }
        return actions
    }

    /// Fails tasks that waited longer than the worker time-out for a worker offering their op.
    mutating func failUnoffered(now: Double) -> [Action] {
        var actions: [Action] = []
        pending.removeAll { item in
            let offered = workers.values.contains { $0.ops.contains(item.task.op) }
            guard !offered, let since = item.waitingForOfferSince ?? Optional(now),
                  now - since >= configuration.workerTimeout else { return false }
            actions.append(.fail(taskID: item.task.taskID, .noWorkerOffers(op: item.task.op, waited: now - since,
                                                                             connectedWorkers: workers.count)))
            return true
        }
        for index in pending.indices where pending[index].waitingForOfferSince == nil {
            let op = pending[index].task.op
            if !workers.values.contains(where: { $0.ops.contains(op) }) { pending[index].waitingForOfferSince = now }
        }
        return actions
    }
}
