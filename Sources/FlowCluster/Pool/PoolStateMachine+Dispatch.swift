import Flow
import FlowWire
import Foundation

extension PoolStateMachine {
    // MARK: Time and dispatch

    /// Time passed: silent clients and workers out, heartbeats out, the machine's time limits.
    mutating func tick(now: Instant) -> [Action] {
        var actions: [Action] = []
        for (peer, client) in clients where now - client.lastReceived > client.heartbeatInterval * configuration.liveness {
            actions += removeClient(peer, reason: "no message for \((now - client.lastReceived).secondsText)")
        }
        for (peer, client) in clients where now - client.lastSent >= client.heartbeatInterval {
            clients[peer]?.lastSent = now
            actions.append(.send(to: peer, .heartbeat))
        }
        let machineActions = core.tick(now: now)
        return actions + perform(machineActions)
    }

    /// Moves waiting tasks into the machine as its workers have room, fairest run first, and
    /// dispatches them; then sends each client the results collected for it.
    mutating func dispatch(now: Instant) -> [Action] {
        // Only what a free slot can start leaves the fair-share queue: the machine's own reading
        // of its workers says which (one placement table).
        if fair.waitingCount > 0 {
            var free = core.freeSlots()
            // The client of the last task and where it is: a turn's tasks mostly come from one
            // run, and comparing its identity costs less than hashing it (no client comes or
            // goes in this loop, so the index stays valid).
            var last: (peer: Data, index: Dictionary<Data, Client>.Index)?
            while free.room > 0, let (peer, pending) = fair.next(where: { free.admits($0.task.op, placement: $0.task.placement) }) {
                free.take(pending.task.op, placement: pending.task.placement)
                if last?.peer != peer { last = clients.index(forKey: peer).map { (peer, $0) } }
                if let index = last?.index { withClient(at: index) { $0.queuedBytes -= pending.size } }
                core.submit(pending.task, waiter: pending.ticket, budget: pending.task.budget.map { Int($0) } ?? -1)
            }
        }
        return perform(core.dispatch(now: now)) + flush(now: now)
    }

    /// Says goodbye to every worker and client (the pool is stopping).
    mutating func shutdown(reason: String) -> [Action] {
        let goodbyes = clients.keys.sorted { $0.lexicographicallyPrecedes($1) }.map { Action.send(to: $0, .disconnect(reason: reason)) }
        let workers = core.shutdown(reason: reason).compactMap { action -> Action? in
            if case .send(let peer, let message) = action { return .send(to: peer, message) }
            return nil
        }
        clients = [:]
        outbox = [:]
        return workers + goodbyes
    }

    // MARK: Results

    /// The machine's actions for the shell; results go to their clients' outboxes.
    mutating func perform(_ actions: [Core.Action]) -> [Action] {
        var out: [Action] = []
        var results = Answers(capacity: actions.count)
        defer { deliver(results) }
        for action in actions {
            switch action {
            case .send(let peer, let message):
                out.append(.send(to: peer, message))
            case .report(let event):
                out.append(.report(event))
            case .answer(let ticket, var result, _, let worker):
                // Handed on as the worker sent it, under the client's own id and attempt.
                result.taskID = ticket.taskID
                result.attempt = ticket.attempt
                results.append(WirePoolResult(worker: worker, result: result), ticket)
            case .checkpoint(let ticket, _, let value):
                // Sent at once: before the task's result, which waits in the outbox (§7.9).
                out.append(.send(to: ticket.client, .checkpoint([WireCheckpoint(taskID: ticket.taskID, attempt: ticket.attempt, value: value)])))
            case .finish(let ticket, let outcome):
                results.append(WirePoolResult(worker: outcome.worker ?? configuration.name, result: Self.wire(outcome, for: ticket)), ticket)
            }
        }
        return out
    }

    /// Results on their way to their clients' outboxes, each with its ticket, in two arrays: a
    /// pair read out of one array was copied whole for each field read (callgrind).
    struct Answers {
        var results: [WirePoolResult] = []
        var tickets: [Ticket] = []

        init(capacity: Int) {
            results.reserveCapacity(capacity)
            tickets.reserveCapacity(capacity)
        }

        mutating func append(_ result: WirePoolResult, _ ticket: Ticket) {
            results.append(result)
            tickets.append(ticket)
        }
    }

    /// Puts results in their clients' outboxes, in order. A client's run of consecutive results
    /// looks the client up once (its identity hashed once, not three times a result), and its
    /// record is changed in place (see ``submit(_:from:)``).
    mutating func deliver(_ answers: Answers) {
        let tickets = answers.tickets
        var start = tickets.startIndex
        while start < tickets.endIndex {
            let peer = tickets[start].client
            var end = start + 1
            while end < tickets.endIndex, tickets[end].client == peer { end += 1 }
            deliver(answers, in: start..<end, to: peer)
            start = end
        }
    }

    private mutating func deliver(_ answers: Answers, in range: Range<Int>, to peer: Data) {
        fair.finished(peer, count: range.count)
        guard let index = clients.index(forKey: peer) else { return }
        // Taken out of the outbox and put back: appended in place, each result copied once.
        var answered = outbox.removeValue(forKey: peer) ?? []
        answered.reserveCapacity(answered.count + range.count)
        withClient(at: index) { client in
            for position in range {
                let (taskID, poolTaskID) = (answers.tickets[position].taskID, answers.tickets[position].poolTaskID)
                // Only the client's current try of its task: one it sent again has a newer id.
                guard let slot = client.tasks.index(forKey: taskID), client.tasks.values[slot] == poolTaskID else { continue }
                client.tasks.remove(at: slot)
                client.done += 1
                answered.append(answers.results[position])
            }
        }
        if !answered.isEmpty { outbox[peer] = answered }
    }

    mutating func flush(now: Instant) -> [Action] {
        guard !outbox.isEmpty else { return [] }
        let batches = outbox
        outbox = [:]
        return batches.keys.sorted { $0.lexicographicallyPrecedes($1) }.compactMap { peer in
            guard clients[peer] != nil, let batch = batches[peer], !batch.isEmpty else { return nil }
            clients[peer]?.lastSent = now
            return .send(to: peer, .done(batch))
        }
    }

    /// The RESULT for an outcome the machine made itself (a failure: no worker offers the op,
    /// lost too often, unanswered; or cancelled), under the client's id.
    static func wire(_ outcome: FlowTaskResult, for ticket: Ticket) -> WireResult {
        WireResult(taskID: ticket.taskID, attempt: ticket.attempt, finishState: outcome.state, startedAt: outcome.startedAt,
                   finishedAt: outcome.finishedAt, events: [], elementIndex: ticket.elementIndex, output: nil,
                   isPermanent: outcome.isPermanentFailure, retryAfterMilliseconds: 0)
    }



    /// STATUS-REPLY's body (§14.6): the workers and the runs, never a run's data.
    func statusJSON() -> String {
        (try? String(decoding: PoolStatus.encoder.encode(status), as: UTF8.self)) ?? "{}"
    }

    /// The workers and the runs now.
    var status: PoolStatus {
        let workers = core.workers.peers.sorted { $0.lexicographicallyPrecedes($1) }.compactMap { peer -> PoolStatus.Worker? in
            guard let worker = core.workers[peer] else { return nil }
            return PoolStatus.Worker(name: worker.name, host: worker.host.escapingControlCharacters, slots: worker.slots,
                                     busy: min(worker.slots, worker.inFlight.count), ops: worker.ops.sorted(),
                                     labels: worker.labels.mapValues(\.escapingControlCharacters))
        }
        let runs = clients.sorted { $0.value.since < $1.value.since }.map { peer, client -> PoolStatus.Run in
            let run = fair.runs[peer]
            return PoolStatus.Run(id: client.hello.runID.escapingControlCharacters, flow: client.hello.flowName.escapingControlCharacters,
                                  origin: client.hello.origin.escapingControlCharacters, client: client.name, share: client.share,
                                  inFlight: run?.running ?? 0, queued: run?.count ?? 0, done: client.done)
        }
        return PoolStatus(pool: configuration.name, workers: workers, runs: runs)
    }

    static func peerText(_ peer: Data) -> String { "peer " + peer.prefix(8).map { String(format: "%02x", $0) }.joined() }
}
