import Flow
import FlowWire
import Foundation
import Logging
import ZeroMQ

/// The coordinator's I/O shell: owns the ROUTER socket (or the pool link) on one thread, reads it,
/// feeds the ``RunStateMachine`` and performs what it returns. It holds no protocol rule itself.
struct CoordinatorIOLoop {
    typealias Machine = RunStateMachine<CoordinatorMailbox.Waiter>

    let configuration: FlowCoordinator.Configuration
    let mailbox: CoordinatorMailbox
    let wakeup: ZMQWakeup
    /// Runs the tasks that prefer this thread (the flow's engine) between polls.
    let executor: LoopExecutor
    let logger: Logger
    let onEvent: @Sendable (ClusterEvent) -> Void
    /// With CURVE: whether a key is authorised now. Each message's key (its connection's ZAP user
    /// id) is checked, so a key taken off the list ends its worker's registration at the worker's
    /// next message, a heartbeat at most.
    let admits: (@Sendable (String) -> Bool)?
    private let clock = ContinuousClock()

    init(configuration: FlowCoordinator.Configuration, mailbox: CoordinatorMailbox, wakeup: ZMQWakeup, executor: LoopExecutor, logger: Logger,
         admits: (@Sendable (String) -> Bool)? = nil, onEvent: @escaping @Sendable (ClusterEvent) -> Void) {
        self.configuration = configuration
        self.mailbox = mailbox
        self.wakeup = wakeup
        self.executor = executor
        self.logger = logger
        self.admits = admits
        self.onEvent = onEvent
    }

    /// Serves until the mailbox closes; every task still waiting then finishes as cancelled.
    ///
    /// - Parameter link: a pool this coordinator is a client of (`run --pool`): its socket is
    ///   `router`'s place, and its one worker is the pool.
    func run(on router: ZMQSocket, monitor: ZMQSocket? = nil, link: PoolLink? = nil) {
        executor.attach()
        defer { executor.close() }
        var loop = LoopState(router: router, monitor: monitor, wakeup: wakeup, configuration: configuration, now: clock.now)
        while true {
            // What the last turn handed the engine (results that resume it) runs at once, without
            // a poll first; the socket is still read every few turns.
            let (polled, mayWait) = executor.startTurn()
            if polled, !poll(&loop, mayWait: mayWait) { break }
            let now = clock.now
            var actions: [Machine.Action] = []
            // The engine's turn, when its run prefers this thread (``LoopExecutor``): what it
            // queues is taken below without a wake-up.
            executor.runPending()
            let (commands, stopping) = mailbox.take()
            actions += apply(commands, to: &loop.machine)
            if stopping {
                perform(actions + loop.machine.shutdown(reason: "coordinator stopping"), on: loop.sockets.router, link: link, machine: &loop.machine)
                return
            }
            // Into one array: an action copied from one array to the next costs a retain and a
            // release of each of its fields (a RESULT's answer has about ten).
            if polled { readSockets(&loop, link: link, now: now, into: &actions) }
            actions += tickIfDue(&loop, link: link, now: now)
            loop.followReplacedSocket(of: link)
            finishTurn(consume actions, loop: &loop, link: link, now: now)
        }
        // The loop broke on an error: refuse new work and release everyone waiting.
        _ = mailbox.close()
        let actions = apply(mailbox.take().commands, to: &loop.machine) + loop.machine.shutdown(reason: "coordinator failed")
        perform(consume actions, on: loop.sockets.router, link: link, machine: &loop.machine)
    }

    /// Waits for a socket, the wake-up or the next deadline (not at all when `mayWait` is false);
    /// `false` when polling failed, which ends the loop.
    private func poll(_ loop: inout LoopState, mayWait: Bool) -> Bool {
        do {
            try loop.sockets.poll(until: loop.machine.nextDeadline, mayWait: mayWait)
            return true
        } catch {
            logger.error("coordinator poll failed: \(error)")
            return false
        }
    }

    /// What the monitor (failed handshakes) and the router (or the pool link) have to say.
    private func readSockets(_ loop: inout LoopState, link: PoolLink?, now: ContinuousClock.Instant, into actions: inout [Machine.Action]) {
        actions += loop.sockets.failedHandshakeReports(now: now).map { .report($0) }
        guard loop.sockets.routerReadable else { return }
        if let link {
            receiveAll(from: link, into: &loop.machine, now: now, malformed: &loop.malformed, actions: &actions)
        } else {
            receiveAll(from: loop.sockets, into: &loop.machine, now: now, malformed: &loop.malformed, actions: &actions)
        }
    }

    /// The machine's timers (liveness, time limits, budgets) and the pool link's heartbeat, when due.
    private func tickIfDue(_ loop: inout LoopState, link: PoolLink?, now: ContinuousClock.Instant) -> [Machine.Action] {
        guard loop.sockets.tickIfDue(now: now) else { return [] }
        var (actions, linkActions) = loop.machine.tick(now: now, window: configuration.heartbeatInterval * configuration.liveness)
        actions += loop.malformed.heldBack(now: now).map { .report($0) }
        if let link {
            for status in link.refusedHandshakes() {
                linkActions += loop.machine.refusedHandshake(status: status, key: link.connection.curve?.keyPair.publicKey)
            }
            if link.perform(linkActions) { loop.machine.saidHello(now: now) }
        }
        return actions
    }

    /// Sends what the turn decided, tasks for freed slots first.
    private func finishTurn(_ actions: consuming [Machine.Action], loop: inout LoopState, link: PoolLink?, now: ContinuousClock.Instant) {
        // Tasks waiting for the slots just freed leave first: handing results back to the
        // engine wakes its task, which took 0.1 ms before they left (400 × 25 ms on 16 slots).
        let dispatched = loop.machine.dispatch(now: now)
        // The status next: performing the actions resumes the engine's waiters, and a run
        // that ends then must not see the tasks it just got back as still running.
        publishStatus(of: &loop)
        perform(dispatched, on: loop.sockets.router, link: link, machine: &loop.machine)
        perform(consume actions, on: loop.sockets.router, link: link, machine: &loop.machine)
        perform(loop.machine.dispatch(now: now), on: loop.sockets.router, link: link, machine: &loop.machine)
        publishStatus(of: &loop)
    }

    private func publishStatus(of loop: inout LoopState) {
        let machine = loop.machine.core
        // The list of workers only when it changed: a status asks for it now and then, a turn
        // comes every few microseconds.
        if loop.shownWorkers != machine.workers.generation {
            loop.shownWorkers = machine.workers.generation
            mailbox.connectedWorkers = machine.workers.values.map {
                FlowCoordinator.ConnectedWorker(name: $0.name, host: $0.host.escapingControlCharacters, slots: $0.slots,
                                                labels: $0.labels.mapValues(\.escapingControlCharacters), labelsKnown: $0.labelsKnown,
                                                isPool: $0.isPool)
            }.sorted { $0.name < $1.name }
        }
        mailbox.status = FlowCoordinator.Status(
            workers: machine.workerCount, slots: machine.workers.values.reduce(0) { $0 + $1.slots },
            running: machine.runningCount, queued: machine.queue.count + machine.queuedOnWorkers)
        if !machine.budgets.isEmpty, mailbox.budgets.isDue() { mailbox.budgets.statuses = machine.budgetStatuses }
    }

    private func apply(_ commands: [CoordinatorMailbox.Command], to machine: inout Machine) -> [Machine.Action] {
        var actions: [Machine.Action] = []
        for command in commands {
            switch command {
            case .submit(let task, let waiter, let avoid, let budget):
                machine.submit(task, waiter: waiter, avoid: avoid, group: waiter.groupLimit, budget: budget)
            case .cancelInbox(let inbox): actions += machine.cancel(where: { $0.belongs(to: inbox) })
            case .resumeGroup(let id): machine.resume(group: id)
            case .cancel(let taskID): actions += machine.cancel(taskID: taskID)
            case .setPaused(let paused): actions += machine.setPaused(paused)
            case .setBudget(let id, let name, let rates, let maxConcurrent, let adaptive):
                machine.setBudget(id: id, name: name, rates: rates, maxConcurrent: maxConcurrent, adaptive: adaptive, now: .now)
            case .askPoolWorkers: machine.askPoolWorkers(into: &actions)
            }
        }
        return actions
    }

    /// What the pool sent (`run --pool`): its DEALER frames carry no routing id.
    private func receiveAll(from link: PoolLink, into machine: inout Machine, now: ContinuousClock.Instant,
                            malformed: inout MalformedTraffic, actions: inout [Machine.Action]) {
        for _ in 0..<10_000 {
            guard var frames = (try? link.socket.receiveMultipart(dontWait: true)) ?? nil else { break }
            do {
                let decoded = try WireCodec.decode(taking: &frames)
                if link.perform(machine.receiveFromPool(decoded, now: now, into: &actions)) { machine.saidHello(now: now) }
            } catch {
                // A FLOW02 message, however malformed, is a sign of life (§8.5), the pool's too.
                if error.code != .unsupportedVersion && error.code != .wrongProtocol { machine.heardMalformedFromPool(now: now) }
                let event = malformed.handle(error, frames: frames, from: PoolLink.peer, name: "the pool at \(link.connection.endpoint)",
                                             now: now) { reply in _ = try? link.socket.send(Array(reply.dropFirst()), flags: .dontWait) }
                if let event { actions.append(.report(event)) }
            }
        }
    }

    private func receiveAll(from sockets: RouterSockets, into machine: inout Machine, now: ContinuousClock.Instant,
                            malformed: inout MalformedTraffic, actions: inout [Machine.Action]) {
        let router = sockets.router
        // With CURVE, a key taken off the list since its handshake allows nothing.
        let admit = { [admits] (key: String?) -> Void? in
            guard let admits else { return () }
            return key.map(admits) == true ? () : nil
        }
        sockets.receiveEach(withKey: admits != nil, logger: logger, role: "coordinator", admit: admit) { inbound in
            switch inbound {
            case .revoked(let peer):
                // Taken off the list since its handshake: its registration ends, and it hears why.
                actions += machine.revoked(peer, now: now)
            case .message(let peer, _, let message):
                machine.receive(message, from: peer, now: now, into: &actions)
            case .malformed(let peer, let error, let body, let signOfLife):
                if signOfLife { machine.heardMalformed(from: peer, now: now) }
                let name = machine.core.workers[peer]?.name ?? "peer " + peer.prefix(8).map { String(format: "%02x", $0) }.joined()
                let event = malformed.handle(error, frames: body, from: peer, name: name, now: now) { reply in
                    _ = try? router.send(reply, flags: .dontWait)
                }
                if let event { actions.append(.report(event)) }
            }
        }
    }

    /// Performs actions; a send that fails ends that worker's registration at once (§8.6), and
    /// what the machine does about it is performed too, after the rest.
    ///
    /// Each action is moved out of the array, not copied: a copy retains each field of it and its
    /// end releases them again, and a RESULT's answer has about ten (callgrind: 2,000 answered
    /// tasks cost 4 M instructions more that way).
    private func perform(_ actions: consuming [Machine.Action], on router: ZMQSocket, link: PoolLink?, machine: inout Machine) {
        var batch = consume actions
        while !batch.isEmpty {
            batch.reverse()
            var more: [Machine.Action] = []
            while let action = batch.popLast() {
                perform(action, on: router, link: link, machine: &machine, more: &more)
            }
            batch = more
        }
    }

    /// Performs one action; what the machine makes of a failed send goes to `more`.
    private func perform(_ action: consuming Machine.Action, on router: ZMQSocket, link: PoolLink?, machine: inout Machine,
                         more: inout [Machine.Action]) {
        switch consume action {
        case .send(_, let message) where link != nil:
            guard let link else { return }
            let refused = link.send(message)
            if !refused.isEmpty { machine.refusedBySubmitGuard(refused, now: .now, into: &more) }
        case .send(let peer, let message):
            do {
                _ = try router.send([peer] + WireCodec.encode(message), flags: .dontWait)
            } catch {
                let reason = (error as? ZMQError)?.message ?? "\(error)"
                more += machine.sendFailed(to: peer, reason: "sending \(message.command) failed: \(reason)", now: ContinuousClock.now)
            }
        case .finish(let waiter, let result):
            waiter.resume(returning: result)
        case .answer(let waiter, let result, let task, let worker):
            // The one conversion from the wire to the engine's result (§7.3).
            waiter.resume(returning: FlowTaskResult(wire: result, for: task, worker: worker))
        case .checkpoint(let waiter, let index, let value):
            waiter.checkpointed(value, element: index)
        case .report(let event):
            logger.log(level: event.logLevel, "\(event)", metadata: event.metadata)
            onEvent(event)
        }
    }
}

/// Lets a log line through at most once per interval per peer, counting the ones it holds back.
struct RateLimiter {
    let interval: Duration
    private var peers: [Data: (last: ContinuousClock.Instant, held: Int)] = [:]

    init(interval: Duration) {
        self.interval = interval
    }

    /// `nil` to hold the line back, or how many were held back since the last one let through.
    mutating func admit(_ peer: Data, now: ContinuousClock.Instant) -> Int? {
        if let entry = peers[peer], now - entry.last < interval {
            peers[peer]?.held += 1
            return nil
        }
        // Bounded: a flood of fresh connections cannot grow this without limit.
        if peers.count >= 4_096 { peers.removeAll(keepingCapacity: true) }
        let held = peers[peer]?.held ?? 0
        peers[peer] = (now, 0)
        return held
    }

    /// The keys with lines held back whose interval has passed, and how many each held: said now,
    /// so that a burst that ends leaves its count too, not only a burst that goes on.
    mutating func heldBack(now: ContinuousClock.Instant) -> [(key: Data, held: Int)] {
        var due: [(key: Data, held: Int)] = []
        for (key, entry) in peers where entry.held > 0 && now - entry.last >= interval {
            due.append((key, entry.held))
            peers[key] = (now, 0)
        }
        return due.sorted { $0.key.lexicographicallyPrecedes($1.key) }
    }
}
