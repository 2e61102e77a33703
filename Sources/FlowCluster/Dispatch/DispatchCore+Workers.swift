import Flow
import FlowWire
import Foundation

extension DispatchCore {
    /// Why a worker's registration ended.
    enum RemovalReason: Sendable {
        case silent(Duration)
        case unreachable(String)
        case left(String)
        case reregistered
        case revoked

        var text: String {
            switch self {
            case .silent(let silence): return "no message for \(silence.secondsText)"
            case .unreachable(let reason): return "unreachable: \(reason)"
            case .left(let reason): return reason.isEmpty ? "it said DISCONNECT" : "it said DISCONNECT: \(reason.escapingControlCharacters)"
            case .reregistered: return "it registered again"
            case .revoked: return "its key is no longer in the authorised keys"
            }
        }
    }

    /// A FLOW02 message from a registered worker that could not be taken (malformed, §9.1): a sign
    /// of life all the same (§8.5); nothing else changes.
    mutating func heard(from peer: Data, now: Instant) {
        withWorker(peer) { $0.lastReceived = now }
    }

    /// A message from a peer, already decoded.
    mutating func receive(_ message: WireMessage, from peer: Data, now: Instant) -> [Action] {
        var actions: [Action] = []
        receive(message, from: peer, now: now, into: &actions)
        return actions
    }

    /// ``receive(_:from:now:)``, appending its actions to `actions`: a RESULT of a few hundred
    /// results then makes no array per result, nor copies each action from one array to the next.
    mutating func receive(_ message: WireMessage, from peer: Data, now: Instant, into actions: inout [Action]) {
        // In place, not a copy of the worker written back (its sets retained, released).
        guard let workerName = withWorker(peer, { worker -> String in
            worker.lastReceived = now
            return worker.name
        }) else {
            switch message {
            case .ready(let ready):
                actions += register(ready, peer: peer, now: now)
            case .disconnect:
                break
            case .hello, .status:
                // A pool's client (§14) that reached a coordinator of one run.
                actions += [.send(to: peer, .disconnect(reason: Self.notAPool)),
                            .report(.unknownPeer(command: message.command.description))]
            default:
                // §8.1: tell a peer we do not know to start over with READY.
                actions += [.send(to: peer, .disconnect(reason: "unknown worker: send READY first")),
                            .report(.unknownPeer(command: message.command.description))]
            }
            return
        }
        switch message {
        case .ready(let ready):
            // A worker that reconnected on the same socket: its running tasks are lost (§8.1).
            actions += remove(peer, reason: .reregistered, now: now) + register(ready, peer: peer, now: now)
        case .result(let results):
            // Room for an answer each at once: grown a step at a time, the actions (a hundred a
            // RESULT, each a dozen words) were copied seven times over (callgrind).
            actions.reserveCapacity(actions.count + results.count)
            for result in results { accept(result, from: peer, now: now, into: &actions) }
        case .returned(let references):
            actions += takeBack(references, from: peer)
        case .progress(let entries):
            countProgress(entries, from: peer, now: now)
        case .checkpoint(let entries):
            keep(entries, from: peer, into: &actions)
        case .heartbeat:
            break
        case .labels(let labels):
            actions += take(labels, from: peer, name: workerName)
        case .disconnect(let reason):
            actions += remove(peer, reason: .left(reason), now: now)
        case .task, .recall, .cancel, .rate, .hello, .welcome, .submit, .withdraw, .status, .statusReply, .done:
            actions.append(.report(.unexpectedMessage(worker: workerName, command: message.command.description)))
        }
    }

    /// The DISCONNECT reason a coordinator of one run gives a pool's client (§14).
    static var notAPool: String { "this is a coordinator for one run, not a pool: start 'flow-coordinator pool'" }

    /// A message to a worker could not be sent (`ZMQ_ROUTER_MANDATORY`): the worker is dead (§8.6).
    mutating func sendFailed(to peer: Data, reason: String, now: Instant) -> [Action] {
        remove(peer, reason: .unreachable(reason), now: now)
    }

    /// Registers the pool this coordinator is a client of (§14) as its one worker: WELCOME's
    /// credit is its slot count, and it offers every op. A pool that holds budgets (WELCOME bit 0)
    /// is sent them as a worker with the progress and requests features is (§15.2 "Pools"); one that
    /// relays checkpoints (WELCOME bit 1) gets them as a worker with the checkpoint feature (§7.9).
    mutating func registerPool(_ welcome: WireWelcome, peer: Data, now: Instant) -> [Action] {
        let name = "pool " + welcome.poolName.escapingControlCharacters
        let budgets = welcome.features & WireWelcome.Feature.budgets != 0 ? WireReady.Feature.progress | WireReady.Feature.requests : 0
        let checkpoints = welcome.features & WireWelcome.Feature.checkpoints != 0 ? WireReady.Feature.checkpoint : 0
        var pool = Worker(name: name, ops: [], slots: Int(welcome.slotCount), lastReceived: now, lastSent: now,
                          heartbeatInterval: .milliseconds(max(1, welcome.heartbeatIntervalMilliseconds)),
                          features: WireReady.Feature.operationAttempt | WireReady.Feature.retryPolicy | budgets | checkpoints)
        pool.isPool = true
        pool.takesPlacement = welcome.features & WireWelcome.Feature.placement != 0
        workers.register(pool, as: peer)
        return [.report(.workerJoined(name: name, host: welcome.poolName.escapingControlCharacters, slots: Int(welcome.slotCount), ops: 0))]
    }

    mutating func register(_ ready: WireReady, peer: Data, now: Instant) -> [Action] {
        // The name as it is printed everywhere (summary lines, events, errors): a peer's newline
        // or terminal escape must not reach a terminal as one.
        let name = ready.workerName.escapingControlCharacters
        var worker = Worker(name: name, ops: Set(ready.ops), slots: Int(ready.slotCount), lastReceived: now, lastSent: now,
                            heartbeatInterval: .milliseconds(max(1, ready.heartbeatIntervalMilliseconds)), features: ready.features)
        worker.host = ready.hostname
        // A worker with labels is asked for them (§7.10); until they come, no step placed by
        // labels goes to it.
        let hasLabels = ready.features & WireReady.Feature.labels != 0
        worker.labelsKnown = !hasLabels
        workers.register(worker, as: peer)
        return [.report(.workerJoined(name: name, host: ready.hostname.escapingControlCharacters, slots: Int(ready.slotCount),
                                      ops: ready.ops.count))]
            + (hasLabels ? [.send(to: peer, .labels([]))] : [])
    }

    /// A worker's LABELS (§7.10): from one that announced feature bit 7, its labels from now on;
    /// from any other, unexpected (§9.2).
    mutating func take(_ labels: [WireLabel], from peer: Data, name: String) -> [Action] {
        let byKey = Dictionary(labels.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
        guard workers.setLabels(byKey, of: peer) else { return [.report(.unexpectedMessage(worker: name, command: WireCommand.labels.description))] }
        return [.report(.workerLabels(name: name, labels: labels.sorted().map { "\($0.key)=\($0.value)" }.joined(separator: " ")))]
    }

    /// Ends a worker's registration (§8.6): its running tasks go elsewhere (``takeAway(from:reason:now:)``).
    mutating func remove(_ peer: Data, reason: RemovalReason, now: Instant) -> [Action] {
        guard let name = workers[peer]?.name else { return [] }
        let (requeued, actions) = takeAway(from: peer, reason: reason.text, now: now)
        let event: ClusterEvent
        switch reason {
        case .left, .reregistered, .revoked:
            event = .workerLeft(name: name, reason: reason.text, requeued: requeued)
            workers.remove(peer)
        case .silent, .unreachable:
            event = .workerLost(name: name, reason: reason.text, requeued: requeued)
            workers.remove(peer, lostFor: reason.text)
        }
        // Forgotten once its tasks are released from it.
        sentRates[peer] = nil
        return [.report(event)] + actions
    }

    /// Takes every task in flight on a worker away from it, as lost (§8.6): each goes back to the
    /// front of the queue with the next attempt number, and each such loss counts toward
    /// `maxAttempts`. Each of them is reported
    /// (``ClusterEvent/taskLost(worker:op:element:attempt:ranFor:)``) for the timeline.
    ///
    /// - Parameter reason: why, for a task given up after too many losses.
    /// - Returns: how many tasks go elsewhere, and the actions.
    mutating func takeAway(from peer: Data, reason: String, now: Instant) -> (requeued: Int, actions: [Action]) {
        guard let worker = workers[peer] else { return (0, []) }
        var actions: [Action] = []
        var lost: [Action] = []
        var requeued: [UInt64] = []
        for taskID in worker.inFlight.sorted() {
            guard var record = tasks[taskID] else { continue }
            release(&record, from: peer)
            guard let waiter = record.waiter else {
                tasks[taskID] = nil
                continue
            }
            let task = record.task
            lost.append(.report(.taskLost(worker: worker.name, op: task.op, element: task.isGroupElement ? task.elementIndex : nil,
                                          attempt: Int(task.operationAttempt), ranFor: record.sentAt.map { now - $0 } ?? .zero)))
            record.losses += 1
            if record.losses >= configuration.maxAttempts {
                tasks[taskID] = nil
                let error = ClusterError.quarantined(op: record.task.op, attempts: Int(record.losses), lastWorker: worker.name,
                                                     lastReason: reason)
                actions += finish(waiter, .failure(error, wire: record.task))
                continue
            }
            record.task.attempt += 1
            record.worker = nil
            record.sentAt = nil
            tasks[taskID] = record
            requeued.append(taskID)
        }
        queue.insert(contentsOf: requeued, at: 0)
        return (requeued.count, lost + actions)
    }

    /// Accepts a RESULT once: from the worker and attempt the task was given to (§8.4). Its
    /// actions are appended to `actions`: no array made per result.
    ///
    /// - Parameter ranBy: the worker that ran it, when `peer` is a pool that says so (DONE, §14).
    mutating func accept(_ result: WireResult, from peer: Data, now: Instant, ranBy: String? = nil, into actions: inout [Action]) {
        // Checked in place and then moved out of the table: a record read through its getter is
        // a copy of every field, retained and released (callgrind).
        guard let index = tasks.index(forKey: result.taskID),
              withTask(at: index, { $0.worker == peer && $0.task.attempt == result.attempt }) else {
            actions.append(discarded(taskID: result.taskID, attempt: result.attempt, from: peer))
            return
        }
        var record = tasks.remove(at: index).value
        let givenBack = { if case .cancelled = result.finishState { true } else { false } }()
        // A task given back `cancelled` by a stopping worker never ran (§8.8): no slot of the
        // worker frees for it. One the engine withdrew is a CANCEL's answer (§7.8): it frees its
        // slot if it was running there.
        let releasedBy = release(&record, from: peer, freesSlot: !givenBack || (record.waiter == nil && record.runningSince != nil))
        if record.budget >= 0, !givenBack { adapt(budget: record.budget, to: result, now: now, into: &actions) }
        guard let waiter = record.waiter else { return }
        let workerName = ranBy?.escapingControlCharacters ?? releasedBy ?? "?"
        if givenBack {
            // §8.8: the worker is stopping and gave the task back; it runs elsewhere, and this
            // was no lost attempt.
            withWorker(peer) { $0.stopping = true }
            record.worker = nil
            record.task.attempt += 1
            tasks[result.taskID] = record
            queue.insert(result.taskID, at: 0)
            actions.append(.report(.taskReturned(worker: workerName, op: record.task.op)))
            return
        }
        let expectedIndex = record.task.isGroupElement ? record.task.elementIndex : nil
        holdUntil = holdUntil ?? now + configuration.batchWindow
        guard result.elementIndex == expectedIndex else {
            let text = "worker \(workerName) answered with element index \(result.elementIndex.map(String.init) ?? "none"), "
                + "but the task was \(expectedIndex.map { "element \($0)" } ?? "a serial op")"
            let outcome = FlowTaskResult.failure(ClusterError.protocolViolation(text), wire: record.task)
            finishInGroup(record, .finish(waiter, outcome), succeeded: false, into: &actions)
            return
        }
        finishInGroup(record, .answer(waiter, result, task: record.task, worker: workerName), succeeded: result.finishState.isSuccess,
                      into: &actions)
    }

    /// Hands a task's outcome back; the engine may submit a task in its place, which dispatch
    /// briefly waits for so that they leave together.
    mutating func finish(_ waiter: Waiter, _ result: FlowTaskResult) -> [Action] {
        expectedSubmissions += 1
        return [.finish(waiter, result)]
    }

    /// Appends `outcome` (``Action/finish(_:_:)`` or ``Action/answer(_:_:task:worker:)``) for a
    /// task that ran. A group whose tasks were handed over ahead needs no wait for the engine (the
    /// next one is queued already), and a failure pauses it until the engine has judged it: the
    /// group's tasks that may wait in worker queues are recalled.
    ///
    /// `outcome` is moved into `actions`, not copied: an answer has about ten fields to retain.
    mutating func finishInGroup(_ record: TaskRecord, _ outcome: consuming Action, succeeded: Bool, into actions: inout [Action]) {
        guard let group = record.group else {
            expectedSubmissions += 1
            actions.append(outcome)
            return
        }
        guard !succeeded else {
            actions.append(outcome)
            return
        }
        pausedGroups.insert(group.id)
        let onWorkers = tasks.compactMap { id, other in other.group?.id == group.id && other.worker != nil ? id : nil }
        actions += recall(onWorkers)
        actions.append(outcome)
    }

    /// Queued tasks a worker gave back unrun (RETURNED, §8.2): each goes back to the front of the
    /// queue with the next attempt number, counting no loss; one the engine no longer wants is
    /// forgotten. A reference to a task not in flight there with that attempt is discarded.
    mutating func takeBack(_ references: [WireTaskReference], from peer: Data) -> [Action] {
        var actions: [Action] = []
        var requeued: [UInt64] = []
        for reference in references {
            guard var record = tasks[reference.taskID], record.worker == peer, record.task.attempt == reference.attempt else {
                actions.append(discarded(taskID: reference.taskID, attempt: reference.attempt, from: peer))
                continue
            }
            release(&record, from: peer)
            guard record.waiter != nil else {
                tasks[reference.taskID] = nil
                continue
            }
            record.worker = nil
            record.sentAt = nil
            record.task.attempt += 1
            tasks[reference.taskID] = record
            requeued.append(reference.taskID)
        }
        queue.insert(contentsOf: requeued, at: 0)
        return actions
    }
}

extension Duration {
    /// `1.5 s`, for messages.
    var secondsText: String { FlowDurationText.tenths(self) }
}
