import Flow
import FlowWire
import Foundation
import Logging

/// The worker's protocol logic, free of sockets and clocks (docs/PROTOCOL.md §8): events go in (a
/// connection made, a message or a malformed one received, a task finished, time passing, a
/// request to drain), actions come out (messages to send, tasks to start or cancel, reconnect,
/// stop, log). ``FlowWorker`` is the thin ZeroMQ shell that performs them.
///
/// Rules it keeps: READY first on every connection; at most `slots` tasks run, more wait in a
/// backlog, which goes back to the coordinator unrun (RETURNED) when a task fails, and any of it a
/// RECALL names; finished results leave together in one RESULT; a HEARTBEAT when nothing else was sent
/// for an interval; a coordinator silent for `liveness` intervals, or one that says DISCONNECT,
/// ends the registration: its tasks are cancelled and their results dropped (a new registration
/// generation); a task past its time limit is cancelled and answered with `time limit of … exceeded`
/// (by the machine itself if the op does not return within `stopGrace`); a CANCEL answers the named
/// queued tasks `cancelled` at once and stops the named running ones as a time limit does, answering
/// them `cancelled`; a draining worker answers new tasks `cancelled`, finishes the running ones, then
/// says DISCONNECT and stops.
struct WorkerStateMachine: Sendable {
    typealias Instant = ContinuousClock.Instant

    struct Configuration: Sendable {
        /// What the worker announces.
        var ready: WireReady
        /// Its labels, said in LABELS when the coordinator asks (§7.10): READY sets feature bit 7
        /// when there are any.
        var labels: [WireLabel] = []
        /// How many tasks run at once.
        var slots: Int
        var heartbeatInterval: Duration = .seconds(1)
        var liveness: Int = 3
        /// Said when a connection goes unanswered and no coordinator ever answered (CURVE failures
        /// are silent in libzmq: a wrong coordinator key looks like no coordinator): on the 1st,
        /// 2nd, 4th, 8th… such connection in a row, so a worker waiting long for its coordinator
        /// does not fill its log.
        var noAnswerHint = "no answer from the coordinator"
        /// Said instead of ``noAnswerHint``, as often, once the coordinator has answered this
        /// worker before: then its key was right, and the network or the coordinator is down.
        var silentAgainHint = "no answer from the coordinator, which answered before: the network or the coordinator is down"
        /// The coordinator as log lines name it (`the coordinator at tcp://10.0.0.5:5555`).
        var coordinator = "the coordinator"
        /// How long a task stopped for its time limit may take to return before the worker
        /// answers for it and frees its slot.
        var stopGrace: Duration = .seconds(1)
    }

    enum Action: Sendable {
        case send(WireMessage)
        /// Run a task; report it back with ``finished(run:result:now:)`` under the same `run` id.
        ///
        /// Runs are numbered by the machine rather than named by task id because the same task id
        /// can arrive again on a new registration while the old run is still winding down.
        case start(run: UInt64, WireTask)
        /// Cancel the Swift task of a run; it still reports back, and the machine decides what
        /// its result is worth.
        case cancel(run: UInt64)
        /// Hold the ops' progress to these bytes rates (RATE, §15).
        case setRates([WireRate])
        /// The runs about to be cancelled are so because the coordinator went silent, not because
        /// anyone cancelled them: their ops may leave work for a resumed run (`FlowCancellationCause`).
        case coordinatorLost(runs: [UInt64])
        /// Close the socket, connect a new one at once and call ``connected(now:)``, which says
        /// READY on it. There is no pause without a socket: while no coordinator answers, the new
        /// socket's transport retries the connection by itself (every `RECONNECT_INTERVAL` at
        /// most, §8.7), so a coordinator that starts is found within that interval.
        case reconnect
        /// Close the socket and return.
        case stop
        case log(Logger.Level, String, Logger.Metadata)
    }

    /// A task this process is running.
    struct Run: Sendable {
        var task: Header
        var generation: Int
        var deadline: Instant?
        /// When it was cancelled: for passing its time limit, or because a CANCEL named it.
        var stoppedAt: Instant?
        /// Whether a CANCEL named it: its answer is `cancelled`, not the time limit's failure.
        var isCancelled = false

        /// Whether ``tick(now:date:)`` must look at it: it has a time limit, or it was stopped and
        /// is answered for if it does not return within the stop grace.
        var isWatched: Bool { deadline != nil || stoppedAt != nil }
    }

    /// What a run keeps of its TASK: enough to name it and answer for it, not its parameters,
    /// bucket and element (a copy of the whole TASK retained each of them: perf, 5% of a
    /// worker's time went to copying TASKs).
    struct Header: Sendable {
        var taskID: UInt64
        var attempt: UInt32
        var op: String
        var timeLimitMilliseconds: UInt32
        /// The element's index, `nil` for a serial op.
        var elementIndex: Int?

        init(_ task: WireTask) {
            taskID = task.taskID
            attempt = task.attempt
            op = task.op
            timeLimitMilliseconds = task.timeLimitMilliseconds
            elementIndex = task.isGroupElement ? task.elementIndex : nil
        }
    }

    let configuration: Configuration
    var generation = 0
    var nextRun: UInt64 = 0
    var runs: [UInt64: Run] = [:]
    /// How many of `runs` are watched (``Run/isWatched``: a time limit, or stopped): `tick` looks at
    /// the runs only when some are.
    var watchedRuns = 0
    var backlog: WorkerBacklog = []
    var outbox: [WireResult] = []
    /// Queued tasks given back unrun, sent after `outbox` in one RETURNED.
    var returned: [WireTaskReference] = []
    var isConnected = false
    var isDraining = false
    var isStopped = false
    var lastReceived: Instant
    var lastSent: Instant
    var lastMalformedLog: Instant?
    /// When a message of another protocol version was last logged (§9.3: once a minute).
    var lastOtherVersionLog: Instant?
    /// Whether the coordinator said anything since the last connect.
    var heardSinceConnect = false
    /// Whether any coordinator ever said anything to this worker: after that, nobody answering
    /// is a partition or a coordinator that is down, not a wrong coordinator key.
    var heardEver = false
    /// Connections in a row that ended without an answer; the no-answer hint is logged when this
    /// reaches a power of two.
    var unanswered = 0
    /// Set by a DISCONNECT until a coordinator answers again: the worker waits for the next
    /// coordinator, which is normal for a standing worker between runs, so nobody answering is
    /// not worth a warning.
    var awaitingNextCoordinator = false
    /// The coordinator's uses of features this worker did not announce that were logged already
    /// (§9.2, §15.2: once each).
    var featureViolationsLogged: Set<UInt32> = []

    init(configuration: Configuration, now: Instant) {
        self.configuration = configuration
        lastReceived = now
        lastSent = now
    }

    /// Runs of the current registration.
    /// Tasks of this registration running now. Kept as a count, not counted in `runs`: it is read
    /// for every task taken, and counting copied every run (a profile of 20,000 tasks showed it).
    var runningCount = 0

    // MARK: Events

    /// A new connection: READY goes first (§8.1).
    mutating func connected(now: Instant) -> [Action] {
        isConnected = true
        heardSinceConnect = false
        lastReceived = now
        lastSent = now
        return [.send(.ready(configuration.ready))]
    }

    /// A message from the coordinator, already decoded.
    mutating func received(_ message: WireMessage, now: Instant) -> [Action] {
        lastReceived = now
        heardSinceConnect = true
        heardEver = true
        unanswered = 0
        awaitingNextCoordinator = false
        switch message {
        case .task(let tasks):
            return accept(tasks, now: now)
        case .recall(let ids):
            giveBack { ids.contains($0.taskID) }
            return []
        case .cancel(let ids):
            guard announced(WireReady.Feature.cancel) else { return unannounced(WireReady.Feature.cancel, message.command) }
            return cancel(ids, now: now)
        case .rate(let rates):
            return received(rates)
        case .labels:
            // The coordinator asks for this worker's labels (§7.10): they go back at once.
            guard announced(WireReady.Feature.labels) else { return unannounced(WireReady.Feature.labels, message.command) }
            return [.send(.labels(configuration.labels))]
        case .heartbeat:
            return []
        case .disconnect(let reason):
            var actions = endRegistration(because: "the coordinator said DISCONNECT (\(reason.escapingControlCharacters))",
                                          coordinatorSaidGoodbye: true)
            if isDraining {
                isStopped = true
                return actions + [.stop]
            }
            // READY goes out on a new socket: on this one it could reach the coordinator that is
            // stopping and be lost with it, and the next one would not hear of this worker until
            // the liveness window had passed.
            awaitingNextCoordinator = true
            isConnected = false
            actions.append(.log(.info, "registering again; waiting for the next coordinator", [:]))
            return actions + [.reconnect]
        case .ready, .result, .returned, .progress, .checkpoint, .hello, .welcome, .submit, .withdraw, .status, .statusReply, .done:
            return [.log(.warning, "unexpected \(message.command) from the coordinator: dropped", [:])]
        }
    }

    /// A task this process ran has returned.
    mutating func finished(run id: UInt64, result: WireResult, now: Instant) -> [Action] {
        guard let run = runs.removeValue(forKey: id) else { return [] }
        if run.isWatched { watchedRuns -= 1 }
        guard run.generation == generation else {
            return [.log(.debug, "dropped the result of a task of an earlier registration", Self.metadata(run.task))]
        }
        runningCount -= 1
        if run.isCancelled {
            // Whatever it returned, even a success: the coordinator no longer wants it (§7.8).
            let answer = Self.cancelledResult(run.task, events: result.events, startedAt: result.startedAt, finishedAt: result.finishedAt)
            return answered(answer, now: now, givesQueueBack: false)
        }
        var result = result
        // An op that finished successfully just as it was stopped keeps its success, as in
        // `FlowLocalExecutor`: the work is done, and failing it would only run it again.
        if run.stoppedAt != nil, !result.finishState.isSuccess {
            result = Self.timeLimitResult(run.task, events: result.events, startedAt: result.startedAt, finishedAt: result.finishedAt)
        }
        return answered(result, now: now)
    }

    /// Stop taking tasks; finish the running ones, then DISCONNECT and stop (§8.8).
    mutating func drain(now: Instant, date: Date) -> [Action] {
        guard !isDraining else { return [] }
        isDraining = true
        for task in backlog { outbox.append(Self.cancelledResult(task, date: date)) }
        backlog = []
        return [.log(.info, "draining: finishing \(runningCount) running task(s), taking no more", [:])]
    }

    /// Sends every finished result in one RESULT; a draining worker with nothing left running
    /// then says DISCONNECT and stops.
    ///
    /// - Parameter progress: what the ops reported so far, asked for only when a RESULT goes: a
    ///   task's PROGRESS goes before its RESULT (§15.2), whether its op returned or the task was
    ///   answered without it (a time limit or a stop its op did not heed).
    mutating func flush(now: Instant, progress: () -> [WireProgress]? = { nil }) -> [Action] {
        guard isConnected, !isStopped else { return [] }
        var actions: [Action] = []
        if !outbox.isEmpty {
            if let progress = progress() { actions += report(progress, now: now) }
            actions.append(.send(.result(outbox)))
            outbox = []
            lastSent = now
        }
        if !returned.isEmpty {
            actions.append(.send(.returned(returned)))
            returned = []
            lastSent = now
        }
        if isDraining && runningCount == 0 {
            isStopped = true
            actions += [.send(.disconnect(reason: "worker stopping")), .log(.info, "stopped", [:]), .stop]
        }
        return actions
    }
}
