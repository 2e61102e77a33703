import Flow
import FlowWire
import Foundation

/// The shared dispatch value: where tasks go, free of sockets and clocks. Events go in (a task
/// submitted or cancelled, a message from a worker, a failed send, time passing), actions come
/// out (messages to send, tasks finished or answered, events to report).
///
/// Three roles embed it, each a small machine of its own with no flag for the role:
/// ``RunStateMachine`` (a run's coordinator, with its workers or, through
/// ``PoolClientStateMachine``, a pool as its one worker) and ``PoolStateMachine`` (a pool, its
/// clients' tasks let in by a fair-share queue that asks ``freeSlots()``). Their shells
/// (``CoordinatorIOLoop``, ``PoolIOLoop``) perform what comes out.
///
/// It is the one owner of every task's bookkeeping: its id, TASK, dispatches, worker and the
/// opaque `Waiter` (the role's continuation or ticket) that its result goes to. Its workers are
/// a ``WorkerTable``, changed only through the table's calls.
///
/// Rules it keeps (docs/PROTOCOL.md §8): a task goes only to a known worker that offers its op,
/// is neither stopping nor quarantined, and has a free slot, and tasks ready together for one worker go in one TASK;
/// a RESULT is accepted once, from the worker and attempt the task was given to; a `cancelled`
/// RESULT sends the task to another worker without counting as a lost attempt; every ended
/// registration (silence, a failed send, a second READY, DISCONNECT) sends its tasks elsewhere
/// and counts toward `maxAttempts`; a task no connected worker offers fails after the worker
/// time-out; a try its worker leaves unanswered past its time limit and a grace fails, and a
/// worker that leaves a few so gets no more tasks (§8.9).
struct DispatchCore<Waiter: Sendable>: Sendable {
    typealias Instant = ContinuousClock.Instant

    struct Configuration: Sendable {
        /// Missed intervals before a worker is declared dead.
        var liveness: Int = 3
        /// How long a task waits for a worker that offers its op.
        var workerTimeout: Duration = .seconds(30)
        /// How many registrations may end while running one task before it is quarantined.
        var maxAttempts: UInt32 = 3
        /// How long dispatch waits, after results were handed back, for the tasks the engine
        /// submits in their place, so they leave together in one TASK (§8.2).
        var batchWindow: Duration = .milliseconds(1)
        /// How long a worker's slot stays free with nothing to dispatch, while tasks wait in
        /// another worker's queue, before they are recalled to move (``steal(now:)``): long enough
        /// that the engine's next tasks come first while a group goes on.
        var stealAfter: Duration = .milliseconds(20)
        /// The least grace past a try's time limit before the coordinator fails a try its worker
        /// has not answered (§8.9); a tenth of the limit when that is more.
        var answerGrace: Duration = .seconds(2)
        /// Tries a worker may leave unanswered past their time limit before it gets no more tasks.
        var unansweredBeforeQuarantine = 3
    }

    /// What the shell must do.
    enum Action: Sendable {
        case send(to: Data, WireMessage)
        /// Hand an outcome the machine made itself (a failure: no worker offers the op, lost too
        /// often, unanswered; or cancelled) to whoever submitted the task.
        case finish(Waiter, FlowTaskResult)
        /// Hand a worker's accepted RESULT to whoever submitted the task, as it came, with the
        /// TASK it answers and the name of the worker that ran it: each role makes of it what it
        /// needs (a run, a ``FlowTaskResult``; a pool, a DONE entry under its client's id).
        case answer(Waiter, WireResult, task: WireTask, worker: String)
        case report(ClusterEvent)
        /// Hand what a task's op saved to continue from (§7.9) to whoever submitted it: element
        /// `index` of its group (0 for a serial op).
        case checkpoint(Waiter, index: Int, FlowValue)
    }

    /// A task the engine is waiting for, or one in flight that the engine no longer wants.
    struct TaskRecord: Sendable {
        var task: WireTask
        /// `nil` once the engine cancelled it: its slot stays taken until its RESULT comes.
        var waiter: Waiter?
        /// Registrations that ended while it ran (counted against `maxAttempts`).
        var losses: UInt32 = 0
        /// The worker it runs on, `nil` while it waits.
        var worker: Data?
        /// When it was sent to `worker`.
        var sentAt: Instant?
        /// Since when no connected worker offers its op.
        var unofferedSince: Instant?
        /// Workers that failed an earlier try of it (a retry): another worker gets it when one can.
        var avoid: Set<String> = []
        /// The group it belongs to, when its tasks were handed over ahead of need.
        var group: TaskGroupLimit?
        /// A RECALL went out to move it to an idle worker (``steal()``); cleared when it leaves.
        var stolen = false
        /// For a task with a time limit on a worker: since when it runs there as far as the
        /// coordinator can tell, `nil` while it may still wait in the worker's queue (§8.9).
        var runningSince: Instant?
        /// For such a task sent into a worker's queue: the worker's count of freed slots
        /// (``Worker/freed``) at which it has surely started.
        var startsWhenFreed: UInt64 = 0
        /// Its group's index in ``budgets``, -1 for none (`limit:` and `adaptive:`).
        var budget = -1
    }

    let configuration: Configuration
    /// The places tasks go to (``WorkerTable``): changed only through its calls.
    var workers = WorkerTable()
    var tasks: [UInt64: TaskRecord] = [:]
    /// Ids of the tasks waiting for a worker, in dispatch order.
    var queue: [UInt64] = []
    /// Tasks the engine may submit in place of results just handed back, and until when dispatch
    /// waits for them.
    var expectedSubmissions = 0
    var holdUntil: Instant?
    var rotation = 0
    /// For each group with a limit, at most how many of its tasks can be running now: a worker
    /// runs at most its slots, so of a group's `n` tasks in flight on a worker with `s` slots at
    /// most `min(s, n)` run, the rest wait in its queue (§8.2). This is the sum of that over the
    /// workers; a task of the group is sent only while it stays within the group's limit.
    var groupBound: [UInt64: Int] = [:]
    /// Groups with a failed task the engine has not judged yet: none of their tasks starts.
    var pausedGroups: Set<UInt64> = []
    /// Tasks recalled to move them to an idle worker whose RETURNED (or RESULT) has not come yet.
    var stealing = 0
    /// Since when a slot is free with nothing to dispatch while tasks wait in a worker's queue.
    var idleSince: Instant?
    /// Tasks with a time limit in flight on workers, whose answer ``failUnanswered(now:)`` awaits.
    var timedTasks: Set<UInt64> = []
    /// No task is sent while paused (`flow-coordinator pause`): running ones finish.
    var paused = false
    /// The budgets of groups with a `limit:` or adaptive concurrency, by the index tasks carry.
    var budgets: [GroupBudget] = []
    /// Budgets closed for reuse (a pool's client left, ``closeBudget(_:)``), in the order they closed.
    var closedBudgets: [Int] = []
    /// When a task held back by its group's requests rate may go (``dispatch(now:)`` sets it).
    var budgetWake: Instant?
    /// The bytes rates last sent to each worker (RATE, §15), by budget index.
    var sentRates: [Data: [Int: UInt64]] = [:]
    /// A budget's bytes rate changed: RATE goes again at the next tick.
    var ratesChanged = false
    /// The placements whose waiting tasks were reported (``ClusterEvent/waitingForLabels(labels:op:tasks:timeout:)``).
    var reportedWaits: Set<OfferKey> = []

    init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// How many workers are connected.
    var workerCount: Int { workers.count }

    /// Changes the worker registered as `peer` in place; `nil` when there is none
    /// (``WorkerTable/withWorker(_:_:)``).
    @inline(__always)
    mutating func withWorker<Result>(_ peer: Data, _ change: (inout Worker) -> Result) -> Result? {
        workers.withWorker(peer, change)
    }

    /// Reads or changes the worker at `index` in place (``WorkerTable/withWorker(at:_:)``).
    @inline(__always)
    mutating func withWorker<Result>(at index: Dictionary<Data, Worker>.Index, _ change: (inout Worker) -> Result) -> Result {
        workers.withWorker(at: index, change)
    }

    /// Changes the record of task `id` in place (a dictionary subscript's `_modify` would allocate,
    /// as ``WorkerTable/withWorker(_:_:)`` says); `nil` when there is none.
    @inline(__always)
    mutating func withTask<Result>(_ id: UInt64, _ change: (inout TaskRecord) -> Result) -> Result? {
        guard let index = tasks.index(forKey: id) else { return nil }
        return withTask(at: index, change)
    }

    /// Reads or changes the task record at `index` in place (see ``withWorker(at:_:)``).
    @inline(__always)
    mutating func withTask<Result>(at index: Dictionary<UInt64, TaskRecord>.Index, _ change: (inout TaskRecord) -> Result) -> Result {
        change(&tasks.values[index])
    }

    /// How many tasks are running on workers (in flight and not waiting in a worker's queue).
    var runningCount: Int { workers.values.reduce(0) { $0 + min($1.slots, $1.inFlight.count) } }

    /// How many tasks wait in workers' queues (sent, not yet running).
    var queuedOnWorkers: Int { workers.values.reduce(0) { $0 + $1.queued } }

    /// When the shell must call ``dispatch(now:)`` again even if nothing happens.
    var nextDeadline: Instant? {
        if queue.isEmpty { return idleSince.map { $0 + configuration.stealAfter } }
        guard let budgetWake else { return holdUntil }
        return holdUntil.map { min($0, budgetWake) } ?? budgetWake
    }

    // MARK: Events

    /// A task to run: queued; ``dispatch(now:)`` sends it, to a worker not in `avoid` when one can
    /// take it.
    ///
    /// - Parameter group: its group, when the engine hands that group's tasks over ahead of need:
    ///   at most its limit of them run at once.
    /// - Parameter budget: its group's index in ``budgets``, -1 for none.
    mutating func submit(_ task: WireTask, waiter: Waiter, avoid: Set<String> = [], group: TaskGroupLimit? = nil, budget: Int = -1) {
        var task = task
        // Its op's progress draws on the budget's bytes rate (§15); dispatch leaves the id out
        // for a worker that did not announce the feature.
        if budget >= 0 { task.budget = UInt64(budget) }
        tasks[task.taskID] = TaskRecord(task: task, waiter: waiter, avoid: avoid, group: group, budget: budget)
        queue.append(task.taskID)
        expectedSubmissions = max(0, expectedSubmissions - 1)
    }

    /// The engine judged a failed task of the group and the group goes on: its tasks may start
    /// again.
    mutating func resume(group id: UInt64) {
        pausedGroups.remove(id)
    }

    /// A task left its worker (a result, given back, the worker lost, its time ran out): its place
    /// there frees, its group's bound may fall, and a recall to move it is over.
    ///
    /// - Parameter freesSlot: it ran there and is over, so the worker starts the next task of its
    ///   queue (``Worker/release(_:group:freesSlot:)``).
    /// - Returns: the worker's name, `nil` for one no longer registered.
    @discardableResult
    mutating func release(_ record: inout TaskRecord, from peer: Data, freesSlot: Bool = false) -> String? {
        if record.stolen {
            stealing -= 1
            record.stolen = false
        }
        let taskID = record.task.taskID
        if record.task.timeLimitMilliseconds > 0 { timedTasks.remove(taskID) }
        if record.budget >= 0 { budgets[record.budget].ended() }
        let groupID = record.group?.id
        // The name is read in the same lookup: a RESULT's answer names the worker.
        let released = withWorker(peer) { worker in (lowersBound: worker.release(taskID, group: groupID, freesSlot: freesSlot), name: worker.name) }
        if released?.lowersBound == true, let group = record.group, let bound = groupBound[group.id] {
            groupBound[group.id] = bound > 1 ? bound - 1 : nil
        }
        return released?.name
    }

    /// The report for a RESULT or RETURNED of a task that is not in flight on that worker with that
    /// attempt (§8.4): discarded, saying why. A late answer to a try failed at its time limit
    /// (§8.9) is reported as such, once.
    mutating func discarded(taskID: UInt64, attempt: UInt32, from peer: Data) -> Action {
        let reason: ClusterEvent.DiscardReason
        if withWorker(peer, { $0.unanswered.remove(taskID) != nil }) == true {
            reason = .answeredTooLate
        } else if let record = tasks[taskID] {
            reason = record.task.attempt != attempt ? .otherAttempt(current: record.task.attempt) : .runsElsewhere
        } else {
            reason = .notInFlight
        }
        return .report(.discardedResult(worker: workers[peer]?.name ?? "?", taskID: taskID, attempt: attempt, reason: reason))
    }

    /// Time passed: dead workers out, heartbeats out, tasks nobody offers failed, tries left
    /// unanswered past their time limit failed.
    mutating func tick(now: Instant) -> [Action] {
        var actions: [Action] = []
        for (peer, worker) in workers where now - worker.lastReceived > worker.heartbeatInterval * configuration.liveness {
            actions += remove(peer, reason: .silent(now - worker.lastReceived), now: now)
        }
        for (peer, worker) in workers where now - worker.lastSent >= worker.heartbeatInterval {
            withWorker(peer) { $0.lastSent = now }
            actions.append(.send(to: peer, .heartbeat))
        }
        return actions + failUnoffered(now: now) + failUnanswered(now: now) + allocateRates(now: now)
    }

    /// Says goodbye to every worker and finishes every waiting task as cancelled (the
    /// coordinator is stopping).
    mutating func shutdown(reason: String) -> [Action] {
        let peers = workers.peers.sorted { $0.lexicographicallyPrecedes($1) }
        var actions: [Action] = peers.map { .send(to: $0, .disconnect(reason: reason)) }
        for id in tasks.keys.sorted() {
            if let record = tasks[id], let waiter = record.waiter { actions.append(.finish(waiter, .cancelled(wire: record.task))) }
        }
        workers.removeAll()
        tasks = [:]
        queue = []
        sentRates = [:]
        groupBound = [:]
        pausedGroups = []
        stealing = 0
        timedTasks = []
        return actions
    }
}
