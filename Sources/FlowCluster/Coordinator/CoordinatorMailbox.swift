import Flow
import FlowWire
import Synchronization

/// What async callers hand the coordinator's I/O thread, and what it shows them back: the one
/// piece of state both sides touch, behind a `Mutex`.
final class CoordinatorMailbox: Sendable {
    typealias Waiter = TaskWaiter

    enum Command: Sendable {
        /// `budget`: the task's group budget index, -1 for none (``GroupBudgetTable``).
        case submit(WireTask, Waiter, avoid: Set<String>, budget: Int)
        case cancel(UInt64)
        /// Every task handed over with this inbox that is not finished yet.
        case cancelInbox(FlowResultInbox)
        /// The engine judged a failure of this inbox's group and the group goes on.
        case resumeGroup(UInt64)
        /// No task starts while paused (`flow-coordinator pause`); running ones finish.
        case setPaused(Bool)
        /// A group's budget, or its new rates (``FlowCoordinator/setGroupBudget(at:name:rates:maxConcurrent:adaptive:)``).
        case setBudget(id: Int, name: String, rates: FlowLimitRates, maxConcurrent: Int, adaptive: Bool)
        /// Ask the pool this run goes through for its workers (STATUS, §14.6): `each: worker`.
        case askPoolWorkers
    }

    enum PostOutcome: Sendable {
        case notRunning
        case stopping
        /// Queued; `first` when the queue was empty, so that only the first of a batch wakes the
        /// I/O thread.
        case queued(first: Bool)
    }

    private struct State {
        var commands: [Command] = []
        var accepting = false
        var stopping = false
        var nextTaskID: UInt64 = 0
        var status = FlowCoordinator.Status(workers: 0, slots: 0, running: 0, queued: 0)
        /// Callers of ``workers(atLeast:)`` still waiting.
        var workerWaiters: [WorkerWaiter] = []
        var nextWaiterID: UInt64 = 0
    }

    private struct WorkerWaiter {
        var count: Int
        var id: UInt64
        var continuation: CheckedContinuation<Bool, Never>
    }

    private let state = Mutex(State())
    private let workerList = Mutex(WorkerList())

    /// The connected workers as the I/O thread last showed them, and who waits for them to change.
    private struct WorkerList {
        var workers: [FlowCoordinator.ConnectedWorker] = []
        /// Through a pool: its workers as its last STATUS-REPLY listed them (`nil` before one
        /// came), or ``PoolWorkers/placesNoTasks`` for a pool that cannot place a task on one.
        var poolWorkers: PoolWorkers?
        /// One more each time the I/O thread shows a new list.
        var generation: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiterID: UInt64 = 0
    }

    /// The workers connected now, by name, as the I/O thread last showed them; setting it wakes
    /// the callers of ``workerListChange(after:)``.
    var connectedWorkers: [FlowCoordinator.ConnectedWorker] {
        get { workerList.withLock { $0.workers } }
        set { changeWorkerList { $0.workers = newValue } }
    }

    /// Changes the list, makes it a generation newer and wakes who waits for that.
    private func changeWorkerList(_ change: (inout WorkerList) -> Void) {
        let waiters = workerList.withLock { list in
            change(&list)
            list.generation += 1
            defer { list.waiters = [:] }
            return list.waiters.values
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The workers connected now, and the generation of that list for ``workerListChange(after:)``.
    var connectedWorkersAndGeneration: (workers: [FlowCoordinator.ConnectedWorker], generation: UInt64) {
        workerList.withLock { ($0.workers, $0.generation) }
    }

    /// What a pool said of its workers.
    enum PoolWorkers: Sendable, Equatable {
        case listed([FlowCoordinator.ConnectedWorker])
        /// The pool predates placing tasks (WELCOME without bit 3): a task cannot be sent to one
        /// worker of it.
        case placesNoTasks
    }

    /// Through a pool, its workers as it last listed them, and the list's generation; setting it
    /// wakes the callers of ``workerListChange(after:)``.
    var poolWorkers: (workers: PoolWorkers?, generation: UInt64) {
        workerList.withLock { ($0.poolWorkers, $0.generation) }
    }

    /// Shows the pool's workers as its STATUS-REPLY listed them.
    func showPoolWorkers(_ workers: PoolWorkers) {
        changeWorkerList { $0.poolWorkers = workers }
    }

    /// Returns once the list of connected workers is newer than `generation` (at once if it is
    /// already), or the calling task is cancelled.
    func workerListChange(after generation: UInt64) async {
        let id = workerList.withLock { list in
            list.nextWaiterID += 1
            return list.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = workerList.withLock { list -> Bool in
                    // Under the lock the cancellation handler takes too (as in ``workers(atLeast:)``).
                    if list.generation != generation || Task.isCancelled { return true }
                    list.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            workerList.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
    /// Group budgets: apart from ``state``, so that a run without any pays nothing for them.
    let budgets = GroupBudgetTable()

    /// A fresh task id, never reused in this process.
    func nextTaskID() -> UInt64 {
        state.withLock {
            $0.nextTaskID += 1
            return $0.nextTaskID
        }
    }

    /// Queues a command, unless the coordinator does not take commands (not started, or stopping).
    func post(_ command: Command) -> PostOutcome {
        state.withLock {
            if $0.stopping { return .stopping }
            guard $0.accepting else { return .notRunning }
            let wasEmpty = $0.commands.isEmpty
            $0.commands.append(command)
            return .queued(first: wasEmpty)
        }
    }

    /// Queues several commands at once (one wake-up for all), unless the coordinator does not
    /// take commands.
    func post(contentsOf commands: [Command]) -> PostOutcome {
        state.withLock {
            if $0.stopping { return .stopping }
            guard $0.accepting else { return .notRunning }
            let wasEmpty = $0.commands.isEmpty
            $0.commands.append(contentsOf: commands)
            return .queued(first: wasEmpty)
        }
    }

    /// Everything queued, and whether the coordinator is stopping.
    func take() -> (commands: [Command], stopping: Bool) {
        state.withLock { state in
            defer { state.commands.removeAll(keepingCapacity: true) }
            return (state.commands, state.stopping)
        }
    }

    /// Opens the mailbox once the socket is bound.
    func open() { state.withLock { $0.accepting = true } }

    /// Closes it for good; returns whether it was already closing. Callers waiting for workers
    /// hear `false`.
    func close() -> Bool {
        let (wasStopping, waiters) = state.withLock { state in
            defer { state.stopping = true; state.workerWaiters = [] }
            return (state.stopping, state.workerWaiters)
        }
        for waiter in waiters { waiter.continuation.resume(returning: false) }
        return wasStopping
    }

    /// What the I/O thread shows of the cluster; setting it wakes the callers of
    /// ``workers(atLeast:)`` it satisfies.
    var status: FlowCoordinator.Status {
        get { state.withLock { $0.status } }
        set {
            let satisfied = state.withLock { state -> [WorkerWaiter] in
                state.status = newValue
                guard !state.workerWaiters.isEmpty else { return [] }
                let satisfied = state.workerWaiters.filter { $0.count <= newValue.workers }
                state.workerWaiters.removeAll { $0.count <= newValue.workers }
                return satisfied
            }
            for waiter in satisfied { waiter.continuation.resume(returning: true) }
        }
    }

    /// How many callers wait in ``workers(atLeast:)``.
    var waitingForWorkers: Int { state.withLock { $0.workerWaiters.count } }

    /// Waits until at least `count` workers are registered: `true` then, `false` when the
    /// coordinator stops or the calling task is cancelled first.
    func workers(atLeast count: Int) async -> Bool {
        let id = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool? in
                    if state.status.workers >= count { return true }
                    // Checked under the lock the cancellation handler takes too: a cancellation
                    // is seen here, or finds the waiter registered.
                    if state.stopping || Task.isCancelled { return false }
                    state.workerWaiters.append(WorkerWaiter(count: count, id: id, continuation: continuation))
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> WorkerWaiter? in
                guard let index = state.workerWaiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.workerWaiters.remove(at: index)
            }
            waiter?.continuation.resume(returning: false)
        }
    }
}
