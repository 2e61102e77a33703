import Foundation

/// What a pool holds, as STATUS-REPLY carries it (docs/PROTOCOL.md §14.6) and
/// `flow-coordinator status --pool` prints it: its workers and its runs, never a run's data.
public struct PoolStatus: Codable, Sendable, Equatable {
    /// A worker connected to the pool.
    public struct Worker: Codable, Sendable, Equatable {
        public var name: String
        public var host: String
        public var slots: Int
        /// Slots running a task now.
        public var busy: Int
        public var ops: [String]
        /// The labels it gave (`flow-worker --label`, §7.10), beside `host` and `name` which every
        /// worker has; `nil` from a pool of an earlier release, which does not say.
        public var labels: [String: String]?
    }

    /// A run registered by a client.
    public struct Run: Codable, Sendable, Equatable {
        /// The run's id, as its coordinator's journal names it.
        public var id: String
        public var flow: String
        /// Where it was started from (`user@host`).
        public var origin: String
        /// The client's name (its host and process).
        public var client: String
        public var share: Int
        /// Its tasks given to workers and not answered yet.
        public var inFlight: Int
        /// Its tasks waiting at the pool for a slot.
        public var queued: Int
        /// Its tasks answered since it registered.
        public var done: Int
    }

    /// The pool's name.
    public var pool: String
    public var workers: [Worker]
    public var runs: [Run]

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    /// Reads a STATUS-REPLY's body.
    public init(json: String) throws {
        self = try JSONDecoder().decode(PoolStatus.self, from: Data(json.utf8))
    }

    /// Slots of all workers.
    public var slots: Int { workers.reduce(0) { $0 + $1.slots } }
    /// Slots running a task.
    public var busy: Int { workers.reduce(0) { $0 + $1.busy } }
    /// Tasks waiting at the pool, over all runs.
    public var queued: Int { runs.reduce(0) { $0 + $1.queued } }

    init(pool: String, workers: [Worker], runs: [Run]) {
        self.pool = pool
        self.workers = workers
        self.runs = runs
    }
}
