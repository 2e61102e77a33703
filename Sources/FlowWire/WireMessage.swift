/// One protocol message, as the frames after any routing id carry it (docs/PROTOCOL.md).
package enum WireMessage: Sendable, Hashable {
    /// A worker announces itself. Worker to coordinator; the first message a worker sends.
    case ready(WireReady)
    /// One or more tasks to run. Coordinator to worker; never an empty batch.
    case task([WireTask])
    /// One or more finished tasks. Worker to coordinator; never an empty batch.
    case result([WireResult])
    /// A sign of life. Both directions.
    case heartbeat
    /// The sender is leaving, or does not know the receiver. Both directions.
    case disconnect(reason: String)
    /// Queued tasks the coordinator wants back if they have not started. Coordinator to worker, to
    /// a worker that announced ``WireReady/Feature/queue``; never an empty list.
    case recall([UInt64])
    /// Queued tasks the worker gives back unrun (after a RECALL, or because a task of its failed).
    /// Worker to coordinator; never an empty list.
    case returned([WireTaskReference])
    /// Tasks to stop now, running or queued. Pool to a worker that announced
    /// ``WireReady/Feature/cancel``; never an empty list.
    case cancel([UInt64])
    /// Bytes the ops of a worker sent since its last PROGRESS, per task. Worker to coordinator,
    /// from a worker that announced ``WireReady/Feature/progress``; never an empty list.
    case progress([WireProgress])
    /// The bytes a second each named group budget allows the receiving worker. Coordinator to a
    /// worker that announced ``WireReady/Feature/progress``; never an empty list.
    case rate([WireRate])
    /// What tasks' ops saved to continue from, the latest per task. Worker to coordinator, for
    /// tasks whose TASK carried a checkpoint (flags bit 4); never an empty list.
    case checkpoint([WireCheckpoint])
    /// A worker's labels (§7.10): from a coordinator, always empty, the question to a worker that
    /// announced ``WireReady/Feature/labels``; from that worker, the answer, its labels (maybe none).
    case labels([WireLabel])
    /// A client registers its run. Client to pool; the first message a client sends.
    case hello(WireHello)
    /// The pool accepts a client. Pool to client.
    case welcome(WireWelcome)
    /// Tasks for the pool's workers, with the client's own ids. Client to pool; never empty.
    case submit([WireTask])
    /// Tasks the client no longer wants, by its ids. Client to pool; never an empty list.
    case withdraw([UInt64])
    /// A question for the pool's state. Anyone to pool.
    case status
    /// The pool's state as UTF-8 JSON. Pool to whoever sent STATUS.
    case statusReply(String)
    /// Results of a client's tasks. Pool to client; never an empty batch.
    case done([WirePoolResult])

    /// The message's command byte.
    package var command: WireCommand {
        switch self {
        case .ready: return .ready
        case .task: return .task
        case .result: return .result
        case .heartbeat: return .heartbeat
        case .disconnect: return .disconnect
        case .recall: return .recall
        case .returned: return .returned
        case .cancel: return .cancel
        case .progress: return .progress
        case .rate: return .rate
        case .checkpoint: return .checkpoint
        case .labels: return .labels
        case .hello: return .hello
        case .welcome: return .welcome
        case .submit: return .submit
        case .withdraw: return .withdraw
        case .status: return .status
        case .statusReply: return .statusReply
        case .done: return .done
        }
    }
}

extension WireMessage: CustomStringConvertible {
    /// A one-line summary for logs: the command and its size, never the payload.
    package var description: String {
        switch self {
        case .ready(let ready):
            return "READY \(ready.workerName) slots=\(ready.slotCount) ops=\(ready.ops.count)"
        case .task(let tasks): return "TASK ×\(tasks.count)"
        case .result(let results): return "RESULT ×\(results.count)"
        case .heartbeat: return "HEARTBEAT"
        case .disconnect(let reason): return "DISCONNECT \(reason)"
        case .recall(let ids): return "RECALL ×\(ids.count)"
        case .returned(let tasks): return "RETURNED ×\(tasks.count)"
        case .cancel(let ids): return "CANCEL ×\(ids.count)"
        case .progress(let entries): return "PROGRESS ×\(entries.count)"
        case .checkpoint(let entries): return "CHECKPOINT ×\(entries.count)"
        case .labels(let labels): return "LABELS ×\(labels.count)"
        case .rate(let rates): return "RATE ×\(rates.count)"
        case .hello(let hello): return "HELLO \(hello.clientName) run=\(hello.runID) share=\(hello.share)"
        case .welcome(let welcome): return "WELCOME \(welcome.poolName) slots=\(welcome.slotCount)"
        case .submit(let tasks): return "SUBMIT ×\(tasks.count)"
        case .withdraw(let ids): return "WITHDRAW ×\(ids.count)"
        case .status: return "STATUS"
        case .statusReply(let json): return "STATUS-REPLY \(json.utf8.count) bytes"
        case .done(let results): return "DONE ×\(results.count)"
        }
    }
}

/// One dispatch of a task: its id and attempt, as a RETURNED names the tasks it gives back.
package struct WireTaskReference: Sendable, Hashable {
    /// The task's id, from its TASK.
    package var taskID: UInt64
    /// The attempt, from its TASK.
    package var attempt: UInt32

    /// Creates a reference.
    package init(taskID: UInt64, attempt: UInt32) {
        self.taskID = taskID
        self.attempt = attempt
    }

    /// Bytes of one reference on the wire.
    static let encodedSize = 8 + 4
}
