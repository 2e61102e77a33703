import Flow
import FlowWire
import Foundation

extension DispatchCore {
    /// A connected worker as the coordinator keeps it: what it offers, its slots and queue, what
    /// is in flight on it and per group, and its liveness times.
    struct Worker: Sendable {
        var name: String
        var ops: Set<String>
        var slots: Int
        var inFlight: Set<UInt64> = []
        var lastReceived: Instant
        var lastSent: Instant
        /// The worker's heartbeat interval (READY), which governs this connection.
        var heartbeatInterval: Duration
        /// It answered a task `cancelled` (§8.8): it is stopping and gets no more tasks.
        var stopping = false
        /// It left too many tries unanswered past their time limits (§8.9): it keeps its
        /// registration and its heartbeats, and gets no more tasks.
        var quarantined = false
        /// Tries it left unanswered past their time limit and grace (§8.9).
        var unansweredCount = 0
        /// The tasks whose try the coordinator failed at their time limit while they were on it:
        /// a late RESULT for one is discarded as such (§8.9). At most a few: it is quarantined soon.
        var unanswered: Set<UInt64> = []
        /// Slots the coordinator saw free up on it (a RESULT of a try that ran, or a try failed at
        /// its time limit): a task sent into its queue has surely started once enough have (§8.9).
        var freed: UInt64 = 0
        /// The feature bits of its READY.
        var features: UInt32 = 0
        /// It is a pool (§14) this coordinator is a client of, not a worker: it offers every op
        /// (its workers' ops change as they come and go), keeps the time limits itself, and takes
        /// WITHDRAW for tasks the engine no longer wants.
        var isPool = false
        /// Its host name, from READY: its `host` label unless its labels say otherwise.
        var host = ""
        /// The labels it gave in LABELS (§7.10), by key.
        var labels: [String: String] = [:]
        /// Whether its labels are known: `false` from a READY that set feature bit 7 until its
        /// LABELS comes, and meanwhile no step placed by labels (`on:`) goes to it.
        var labelsKnown = true
        /// For a pool: it places tasks by labels itself (WELCOME bit 3), so it is sent placed tasks.
        var takesPlacement = false
        /// Every label it has: `host` (its host name) and `name` (its name), then the ones it gave,
        /// which win over those two.
        var allLabels: [String: String] { FlowPlacement.labels(given: labels, host: host, name: name) }
        var free: Int { slots - inFlight.count }
        /// Whether dispatch may send it tasks: neither stopping nor quarantined.
        var takesTasks: Bool { !stopping && !quarantined }
        /// Whether it may be sent a task of `op`.
        func offers(_ op: String) -> Bool { isPool || ops.contains(op) }
        /// Whether it may be sent a task of `op` placed on `placement` (its step's `on:`, empty
        /// for anywhere): it offers the op and has every label; a pool, when it places tasks by
        /// labels itself (WELCOME bit 3, §14.4).
        func offers(_ op: String, placement: [WireLabel]) -> Bool {
            guard offers(op) else { return false }
            if placement.isEmpty { return true }
            if isPool { return takesPlacement }
            return has(placement)
        }
        /// Whether it is a worker whose labels are known and include every one of `labels`.
        func has(_ labels: [WireLabel]) -> Bool {
            labelsKnown && labels.allSatisfy { label($0.key) == $0.value }
        }
        /// Its label `key`: one it gave, else `host` and `name`.
        func label(_ key: String) -> String? { FlowPlacement.label(key, given: labels, host: host, name: name) }
        /// Tasks it may hold beyond its slots, waiting in its queue (feature bit 2, §8.2).
        var queueDepth: Int { features & WireReady.Feature.queue != 0 ? slots : 0 }
        /// Tasks in flight on it that wait in its queue rather than run (at least).
        var queued: Int { max(0, inFlight.count - slots) }
        /// How many tasks of each group with a limit are in flight on it.
        var groupTasks: [UInt64: Int] = [:]

        /// Takes a task; says whether the task raises its group's bound (it can run here at once:
        /// fewer of the group's tasks than slots were here).
        mutating func take(_ taskID: UInt64, group: UInt64?) -> Bool {
            inFlight.insert(taskID)
            guard let group else { return false }
            let count = groupTasks[group, default: 0]
            groupTasks[group] = count + 1
            return count < slots
        }

        /// A task left; says whether that lowers its group's bound.
        ///
        /// - Parameter freesSlot: it ran here and is over (a RESULT, or its time ran out), so the
        ///   next task of the worker's queue starts; not for a task given back unrun.
        mutating func release(_ taskID: UInt64, group: UInt64?, freesSlot: Bool = false) -> Bool {
            inFlight.remove(taskID)
            if freesSlot { freed &+= 1 }
            guard let group, let count = groupTasks[group] else { return false }
            groupTasks[group] = count > 1 ? count - 1 : nil
            return count <= slots
        }
    }
}
