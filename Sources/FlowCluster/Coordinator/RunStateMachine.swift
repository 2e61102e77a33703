import Flow
import FlowWire
import Foundation

/// A run's coordinator (`flow-coordinator run`), free of sockets and clocks: the shared
/// ``DispatchCore`` it places the engine's tasks with, and, for a run on a pool (`run --pool`),
/// the ``PoolClientStateMachine`` that speaks to the pool as the run's one worker.
///
/// It is the only thing that changes its core: ``CoordinatorIOLoop`` reads the core (for the
/// run's status) and performs what comes out, and every event goes in through a call here. What
/// is a run's and no other role's: the engine's commands; a worker whose key is taken off the list
/// since its handshake (its registration ends and it hears why); with a pool, that the pool's
/// traffic goes through the client machine and that a task too large to submit is answered as the
/// pool would.
struct RunStateMachine<Waiter: Sendable>: Sendable {
    typealias Core = DispatchCore<Waiter>
    typealias Action = Core.Action
    typealias Instant = ContinuousClock.Instant

    /// Where tasks are placed: the workers, queues, group bounds and budgets.
    private(set) var core: Core
    /// With `run --pool`: the client half of the pool protocol; `nil` for a run with workers of
    /// its own.
    private(set) var client: PoolClientStateMachine?

    /// - Parameter pool: the pool's endpoint for a run on a pool, whose first HELLO went `now`.
    init(configuration: Core.Configuration, pool: String? = nil, now: Instant) {
        core = Core(configuration: configuration)
        client = pool.map { PoolClientStateMachine(endpoint: $0, now: now) }
    }

    /// When the shell must call ``dispatch(now:)`` again even if nothing happens.
    var nextDeadline: Instant? { core.nextDeadline }

    // MARK: The engine

    /// A task to run (``DispatchCore/submit(_:waiter:avoid:group:budget:)``).
    mutating func submit(_ task: WireTask, waiter: Waiter, avoid: Set<String>, group: TaskGroupLimit?, budget: Int) {
        core.submit(task, waiter: waiter, avoid: avoid, group: group, budget: budget)
    }

    /// The engine no longer wants these tasks' results.
    mutating func cancel(where matches: (Waiter) -> Bool) -> [Action] { core.cancel(where: matches) }

    /// The engine no longer wants task `taskID`'s result.
    mutating func cancel(taskID: UInt64) -> [Action] { core.cancel(taskID: taskID) }

    /// The engine judged a failed task of the group and the group goes on.
    mutating func resume(group id: UInt64) { core.resume(group: id) }

    /// `flow-coordinator pause` or `continue`.
    mutating func setPaused(_ paused: Bool) -> [Action] { core.setPaused(paused) }

    /// A group's budget, or its new rates (`limit`, a timetable's next entry).
    mutating func setBudget(id: Int, name: String, rates: FlowLimitRates, maxConcurrent: Int, adaptive: Bool, now: Instant) {
        core.setBudget(id: id, name: name, rates: rates, maxConcurrent: maxConcurrent, adaptive: adaptive, now: now)
    }

    // MARK: Workers (a run with workers of its own)

    /// A message from the peer `peer`, already decoded, its actions appended to `actions`.
    mutating func receive(_ message: WireMessage, from peer: Data, now: Instant, into actions: inout [Action]) {
        core.receive(message, from: peer, now: now, into: &actions)
    }

    /// A FLOW02 message from `peer` that could not be decoded: a sign of life (§8.5).
    mutating func heardMalformed(from peer: Data, now: Instant) {
        core.heard(from: peer, now: now)
    }

    /// A message from `peer` whose key is no longer authorised (taken off the list since its
    /// handshake): a registered worker's registration ends and it hears why; anyone else's
    /// message is dropped.
    mutating func revoked(_ peer: Data, now: Instant) -> [Action] {
        guard core.workers[peer] != nil else { return [] }
        return core.remove(peer, reason: .revoked, now: now)
            + [.send(to: peer, .disconnect(reason: "this worker's key is no longer authorised"))]
    }

    /// A message to `peer` could not be sent: a registered worker is dead (§8.6); for a peer no
    /// longer registered nothing happens.
    mutating func sendFailed(to peer: Data, reason: String, now: Instant) -> [Action] {
        core.sendFailed(to: peer, reason: reason, now: now)
    }

    // MARK: The pool (a run on a pool)

    /// A message from the pool: what the run does appended to `actions`, what the link must do
    /// returned.
    mutating func receiveFromPool(_ message: WireMessage, now: Instant, into actions: inout [Action]) -> [PoolClientStateMachine.Action] {
        client?.receive(message, into: &core, now: now, actions: &actions) ?? []
    }

    /// The run wants the pool's workers (`each: worker`): STATUS, now or after WELCOME.
    mutating func askPoolWorkers(into actions: inout [Action]) {
        client?.askWorkers(actions: &actions)
    }

    /// A FLOW02 message from the pool that could not be decoded: a sign of life all the same.
    mutating func heardMalformedFromPool(now: Instant) {
        client?.heardMalformed(into: &core, now: now)
    }

    /// Results the link made itself (tasks too large to submit), taken as the pool's answer.
    mutating func refusedBySubmitGuard(_ results: [WireResult], now: Instant, into actions: inout [Action]) {
        client?.refuse(results, into: &core, now: now, actions: &actions)
    }

    /// The pool's ZAP handler refused the CURVE handshake (the link's monitor said so).
    mutating func refusedHandshake(status: UInt32, key: String?) -> [PoolClientStateMachine.Action] {
        client?.refusedHandshake(status: status, key: key) ?? []
    }

    /// The link said HELLO on a new socket.
    mutating func saidHello(now: Instant) {
        client?.saidHello(now: now)
    }

    // MARK: Time

    /// Time passed: the core's timers (liveness, time limits, budgets); with a pool, whether to
    /// say HELLO again, judged over `window` (the liveness window).
    mutating func tick(now: Instant, window: Duration) -> (actions: [Action], link: [PoolClientStateMachine.Action]) {
        let actions = core.tick(now: now)
        return (actions, client?.tick(core, window: window, now: now) ?? [])
    }

    /// Sends what can go now (``DispatchCore/dispatch(now:)``).
    mutating func dispatch(now: Instant) -> [Action] { core.dispatch(now: now) }

    /// Says goodbye and finishes every waiting task as cancelled (the coordinator is stopping).
    mutating func shutdown(reason: String) -> [Action] { core.shutdown(reason: reason) }
}
