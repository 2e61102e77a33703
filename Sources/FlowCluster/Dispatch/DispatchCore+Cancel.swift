import Flow
import FlowWire
import Foundation

extension DispatchCore {
    /// The engine no longer wants a task's result: it finishes as cancelled now.
    mutating func cancel(taskID: UInt64) -> [Action] {
        cancel(taskIDs: [taskID])
    }

    /// The engine no longer wants the results of every task whose waiter matches (a group's
    /// inbox): each finishes as cancelled now.
    mutating func cancel(where matches: (Waiter) -> Bool) -> [Action] {
        cancel(taskIDs: tasks.compactMap { id, record in record.waiter.map(matches) == true ? id : nil })
    }

    /// Finishes each task as cancelled: one still queued leaves the queue; one on a worker keeps
    /// its worker's slot until its RESULT comes, which is then dropped, and is recalled in case it
    /// waits in the worker's queue.
    fileprivate mutating func cancel(taskIDs: [UInt64]) -> [Action] {
        var actions: [Action] = []
        var dequeued: Set<UInt64> = []
        var onWorkers: [UInt64] = []
        for taskID in taskIDs {
            guard let record = tasks[taskID], let waiter = record.waiter else { continue }
            // A group given up (ended by a failure, or cancelled) is paused no longer.
            if let group = record.group { pausedGroups.remove(group.id) }
            if record.worker == nil {
                tasks[taskID] = nil
                dequeued.insert(taskID)
            } else {
                withTask(taskID) { $0.waiter = nil }
                onWorkers.append(taskID)
            }
            // Named after the worker it was stopped on: a pool's DONE for a withdrawn task names
            // the worker, as §14.4 and the §12 example say, not the pool.
            var outcome = FlowTaskResult.cancelled(wire: record.task)
            outcome.worker = record.worker.flatMap { workers[$0]?.name }
            actions.append(.finish(waiter, outcome))
        }
        if !dequeued.isEmpty { queue.removeAll { dequeued.contains($0) } }
        return recall(onWorkers) + withdraw(onWorkers) + actions
    }

    /// RECALLs for those of the tasks that may wait in a worker's queue: the ones on a worker that
    /// queues and holds more than its slots (§8.2). One that already started just finishes.
    func recall(_ taskIDs: [UInt64]) -> [Action] {
        messages(for: taskIDs, onWorkersWhere: { $0.queued > 0 }, WireMessage.recall)
    }

    /// One message per worker for those of the tasks in flight on a worker that `matches`, its
    /// ids sorted, the workers in a fixed order (RECALL, WITHDRAW).
    func messages(for taskIDs: [UInt64], onWorkersWhere matches: (Worker) -> Bool, _ message: ([UInt64]) -> WireMessage) -> [Action] {
        var byPeer: [Data: [UInt64]] = [:]
        for taskID in taskIDs {
            guard let peer = tasks[taskID]?.worker, let worker = workers[peer], matches(worker) else { continue }
            byPeer[peer, default: []].append(taskID)
        }
        return byPeer.keys.sorted { $0.lexicographicallyPrecedes($1) }.map { .send(to: $0, message(byPeer[$0]!.sorted())) }
    }
}
