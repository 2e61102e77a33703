/// The one-byte command in frame 1 of every message (docs/PROTOCOL.md, "Commands").
package enum WireCommand: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A worker announces itself and what it offers. Worker to coordinator.
    case ready = 0x01
    /// A batch of tasks to run. Coordinator to worker.
    case task = 0x02
    /// A batch of finished tasks. Worker to coordinator.
    case result = 0x03
    /// A sign of life when nothing else was sent. Both directions; no body frame.
    case heartbeat = 0x04
    /// The sender is leaving, or refuses the receiver. Both directions.
    case disconnect = 0x05
    /// Give back these queued tasks if they have not started. Coordinator to worker.
    case recall = 0x06
    /// Tasks given back unrun. Worker to coordinator.
    case returned = 0x07
    /// Stop these tasks now, running or queued; each is answered with a `cancelled` RESULT.
    /// Pool to a worker that announced ``WireReady/Feature/cancel``.
    case cancel = 0x08
    /// Bytes a worker's ops sent since its last PROGRESS (§15). Worker to coordinator, from a
    /// worker that announced ``WireReady/Feature/progress``.
    case progress = 0x09
    /// The bytes a second each group budget allows this worker (§15). Coordinator to a worker
    /// that announced ``WireReady/Feature/progress``.
    case rate = 0x0A
    /// What tasks' ops saved to continue from (§7.9). Worker to coordinator (and pool to client),
    /// for tasks whose TASK carried a checkpoint (flags bit 4).
    case checkpoint = 0x0B
    /// A worker's labels (§7.10). Coordinator to a worker that announced
    /// ``WireReady/Feature/labels``, always empty: the question; that worker's answer, its labels.
    case labels = 0x0C
    /// A client registers its run with a pool (§14). Client to pool; its first message.
    case hello = 0x10
    /// The pool accepts a client: its credit and heartbeat interval. Pool to client.
    case welcome = 0x11
    /// A batch of tasks for the pool's workers, in TASK's layout. Client to pool.
    case submit = 0x12
    /// The client no longer wants these tasks: dropped if queued, stopped if running. Client to pool.
    case withdraw = 0x13
    /// What the pool holds: its workers and runs. Anyone to pool; no body frame.
    case status = 0x14
    /// The answer to STATUS, as JSON. Pool to whoever asked.
    case statusReply = 0x15
    /// A batch of results of a client's tasks, each with the worker that ran it. Pool to client.
    case done = 0x16

    /// The command's name as the spec writes it (`READY`, `TASK`, …).
    package var description: String {
        switch self {
        case .ready: return "READY"
        case .task: return "TASK"
        case .result: return "RESULT"
        case .heartbeat: return "HEARTBEAT"
        case .disconnect: return "DISCONNECT"
        case .recall: return "RECALL"
        case .returned: return "RETURNED"
        case .cancel: return "CANCEL"
        case .progress: return "PROGRESS"
        case .rate: return "RATE"
        case .checkpoint: return "CHECKPOINT"
        case .labels: return "LABELS"
        case .hello: return "HELLO"
        case .welcome: return "WELCOME"
        case .submit: return "SUBMIT"
        case .withdraw: return "WITHDRAW"
        case .status: return "STATUS"
        case .statusReply: return "STATUS-REPLY"
        case .done: return "DONE"
        }
    }

    /// Whether the message carries a body frame (frame 2).
    package var hasBody: Bool { self != .heartbeat && self != .status }

    /// Whether a peer in the given role may send this command.
    ///
    /// A peer that receives a command its counterpart may not send treats the message as
    /// unexpected: it drops and logs it (docs/PROTOCOL.md, "Error handling").
    /// - Parameter role: the role of the sending peer.
    /// - Returns: `true` when the spec allows that role to send the command.
    package func canBeSent(by role: WirePeerRole) -> Bool {
        switch self {
        case .ready, .result, .progress, .checkpoint: return role == .worker
        // A worker gives back queued tasks; a pool gives back a client's tasks it still held (WITHDRAW).
        case .returned: return role == .worker || role == .coordinator
        case .task, .recall, .cancel, .rate, .welcome, .statusReply, .done: return role == .coordinator
        case .hello, .submit, .withdraw: return role == .client
        case .labels: return role == .worker || role == .coordinator
        case .heartbeat, .disconnect, .status: return true
        }
    }
}
