import Flow
import FlowWire
import Foundation
import Logging

/// Why the pool refused a submitted task (§14.4); each is logged once per client.
enum SubmitRefusal: Hashable, Sendable {
    /// The client had its credit's worth of tasks unanswered already.
    case credit
    /// The client's tasks waiting at the pool held the most bytes one client may have queued.
    case bytes
}

extension PoolStateMachine {
    // MARK: SUBMIT and WITHDRAW

    /// A client's tasks wait for a slot under ids of the pool's own. A task sent again after the
    /// pool restarted (attempt above 1) ran, or may have run, before: its op sees one more try.
    /// A task past the client's credit or its queued bytes is answered at once with a failure
    /// that says so (§14.4).
    mutating func submit(_ tasks: [WireTask], from peer: Data) -> [Action] {
        // The client is looked up once for the whole SUBMIT and changed in place: a copy taken
        // out and put back for each task retained every field of it (perf: a tenth of the pool).
        guard let index = clients.index(forKey: peer) else { return [] }
        var actions: [Action] = []
        // Queued together at the end: one lookup of the client's queue, not one a task.
        var pending: [Pending] = []
        pending.reserveCapacity(tasks.count)
        // The pool's id of the last client budget met: a SUBMIT's tasks mostly share one, and
        // looking it up by client and id cost 650 instructions a task (callgrind).
        var lastBudget: (client: UInt64, pool: UInt64)?
        defer { fair.append(contentsOf: pending, to: peer) }
        for var task in tasks {
            if let old = withClient(at: index, { $0.tasks[task.taskID] }) {
                // What this SUBMIT queued so far goes in first, so that a task sent twice in it is
                // found there too.
                fair.append(contentsOf: pending, to: peer)
                pending.removeAll(keepingCapacity: true)
                // The same id again (a client that resent it): the older dispatch is not wanted.
                let waiting = fair.remove(from: peer, where: { $0.task.taskID == old })
                withClient(at: index) { client in
                    client.queuedBytes -= waiting.reduce(0) { $0 + $1.size }
                    client.tasks[task.taskID] = nil
                }
                if waiting.isEmpty, core.tasks[old] != nil { actions += stop([old]) }
            }
            let size = task.receivedSize > 0 ? task.receivedSize : Self.encodedSize(of: task)
            if let refusal = withClient(at: index, { [configuration] in Self.refusal(of: size, from: $0, configuration: configuration) }) {
                actions += refuse(task, size: size, from: peer, at: index, because: refusal)
                continue
            }
            nextTaskID += 1
            let ticket = Ticket(client: peer, poolTaskID: nextTaskID, taskID: task.taskID, attempt: task.attempt,
                                elementIndex: task.isGroupElement ? task.elementIndex : nil)
            withClient(at: index) { [nextTaskID] client in
                client.tasks[task.taskID] = nextTaskID
                client.queuedBytes += size
            }
            if task.attempt > 1 { task.operationAttempt = max(1, task.operationAttempt) + task.attempt - 1 }
            task.taskID = nextTaskID
            task.attempt = 1
            // A budget id is the client's own (§15): the pool's own budget stands for it.
            if let budget = task.budget {
                if let lastBudget, lastBudget.client == budget {
                    task.budget = lastBudget.pool
                } else {
                    let name = withClient(at: index) { $0.name }
                    let pool = UInt64(budgets.id(for: budget, of: peer, name: name, in: &core))
                    lastBudget = (budget, pool)
                    task.budget = pool
                }
            }
            pending.append(Pending(task: task, ticket: ticket, size: size))
        }
        return actions
    }

    /// Whether a task of `size` bytes goes past the client's credit or queued bytes. A client
    /// with nothing waiting may queue one task of any size the frame limit lets through.
    private static func refusal(of size: Int, from client: borrowing Client, configuration: Configuration) -> SubmitRefusal? {
        if client.tasks.count >= Int(configuration.clientCredit) { return .credit }
        if client.queuedBytes > 0, client.queuedBytes + size > configuration.maxQueuedBytes { return .bytes }
        return nil
    }

    /// Answers a refused task with a failure in the client's next DONE, and logs the first
    /// refusal of each kind for the client.
    private mutating func refuse(_ task: WireTask, size: Int, from peer: Data, at index: Dictionary<Data, Client>.Index,
                                 because refusal: SubmitRefusal) -> [Action] {
        let client = clients.values[index]
        let credit = configuration.clientCredit
        let text: String
        switch refusal {
        case .credit:
            text = "the pool refused this task: the run already had \(credit) tasks submitted and unanswered there, the credit "
                + "its WELCOME gave; a client must wait for answers before it submits more (run a flow-coordinator of the pool's release)"
        case .bytes:
            text = "the pool refused this task (\(size) bytes): \(client.queuedBytes) bytes of this run's tasks already wait there, "
                + "and one client may have at most \(configuration.maxQueuedBytes) waiting (the pool's --max-queued-bytes); keep large "
                + "data in a file or a store and put its path or URL in the bucket, or lower the group's maxConcurrent"
        }
        let now = Date()
        let result = WireResult(taskID: task.taskID, attempt: task.attempt, finishState: .withError(text), startedAt: now, finishedAt: now,
                                elementIndex: task.isGroupElement ? task.elementIndex : nil, isPermanent: refusal == .credit)
        outbox[peer, default: []].append(WirePoolResult(worker: configuration.name, result: result))
        guard withClient(at: index, { $0.refusalsLogged.insert(refusal).inserted }) else { return [] }
        let why = refusal == .credit ? "past its credit of \(credit) tasks"
            : "past \(configuration.maxQueuedBytes) bytes waiting (--max-queued-bytes)"
        return [.log(.warning, "client \(client.name) (run \(client.hello.runID.escapingControlCharacters)) submitted tasks \(why): "
            + "each is answered with a failure; further refusals of this client are not logged")]
    }

    /// A task's size as SUBMIT carries it.
    static func encodedSize(of task: WireTask) -> Int {
        var writer = WireWriter(capacity: 0)
        task.write(to: &writer)
        return writer.count
    }

    /// WITHDRAW (§14.4): a waiting task is given back (RETURNED), one at a worker is answered
    /// `cancelled` now and stopped there (CANCEL, to a worker that takes it). Ids the client does
    /// not hold are ignored: no client can name another's task.
    mutating func withdraw(_ ids: [UInt64], from peer: Data) -> [Action] {
        guard let client = clients[peer] else { return [] }
        var poolIDs: [UInt64: UInt64] = [:]
        for id in ids { if let poolID = client.tasks[id] { poolIDs[poolID] = id } }
        guard !poolIDs.isEmpty else { return [] }
        var actions: [Action] = []
        let returned = fair.remove(from: peer) { poolIDs[$0.task.taskID] != nil }
        if !returned.isEmpty {
            for pending in returned { clients[peer]?.tasks[pending.ticket.taskID] = nil }
            clients[peer]?.queuedBytes -= returned.reduce(0) { $0 + $1.size }
            actions.append(.send(to: peer, .returned(returned.map { WireTaskReference(taskID: $0.ticket.taskID, attempt: $0.ticket.attempt) })))
        }
        let inMachine = poolIDs.keys.filter { core.tasks[$0] != nil }.sorted()
        return actions + stop(inMachine)
    }
}
