public import Flow
package import FlowWire
public import ZeroMQ

extension FlowCoordinator {
    /// How the coordinator listens, how patient it is, and what it knows of the ops it runs.
    public struct Configuration: Sendable {
        /// The endpoint to bind, for example `tcp://0.0.0.0:5555` or `ipc:///tmp/flow.sock`.
        public var endpoint: String
        /// The coordinator heartbeats each worker at the interval the worker announces in READY;
        /// this sets how often it checks (a quarter of it, at most every 50 ms).
        public var heartbeatInterval: Duration = .seconds(1)
        /// Missed heartbeat intervals before a worker is declared dead.
        public var liveness: Int = 3
        /// How long a task waits for a worker offering its op before it fails.
        public var workerTimeout: Duration = .seconds(30)
        /// Registrations that may end while running one task before it is given up.
        public var maxAttempts: UInt32 = 3
        /// How long past a try's time limit (a step's `timeout`) the coordinator waits for the
        /// worker's answer before it fails that try itself: this at least, or a tenth of the limit
        /// when that is more. More than the second a worker takes to answer for an op that does not
        /// stop, so it only catches workers that took a task and never answer (docs/PROTOCOL.md §8.9).
        public var answerGrace: Duration = .seconds(2)
        /// Tries a worker may leave unanswered past their time limit before it gets no more tasks.
        public var unansweredBeforeQuarantine = 3
        /// What the coordinator knows of ops before it sends them: which run on the coordinator
        /// itself (`FlowOperationRegistry.Placement.coordinator`, built from this registry),
        /// and which prepare their input first (`FlowOperationRegistry.InputPreparer`). Ops
        /// not in it are sent to workers as they are.
        public var registry = FlowOperationRegistry()
        /// CURVE security (CurveZMQ, RFC 26): the coordinator's key pair and the workers' public
        /// keys it admits (ZAP, RFC 27); `nil` is plaintext.
        public var curve: CurveServer?
        /// The largest frame taken from a peer; a peer that sends a larger one is disconnected
        /// before anything is buffered (`ZMQ_MAXMSGSIZE`).
        public var maximumInboundFrameSize = WireLimits.maximumInboundFrameSize
        /// Counts every task it runs (``TaskMetrics``); `nil` counts nothing.
        public var metrics: TaskMetrics?
        /// Run the tasks on a pool's workers (`run --pool`, docs/PROTOCOL.md §14): connect to the
        /// pool instead of binding `endpoint`.
        public var pool: PoolConnection?

        /// Creates a configuration.
        public init(endpoint: String) {
            self.endpoint = endpoint
        }
    }

    /// How a coordinator reaches the pool it runs its flow on, and what it tells the pool.
    public struct PoolConnection: Sendable {
        /// The pool's endpoint, for example `tcp://pool.example:5555`.
        public var endpoint: String
        /// The run: its id, flow, origin, share and heartbeat interval.
        package var hello: WireHello
        /// CURVE: this coordinator's key pair and the pool's public key (40 Z85 characters).
        public var curve: (keyPair: ZMQCurveKeyPair, poolKey: String)?
        /// The largest SUBMIT the pool takes (its frame limit, §10): a task over it fails at once
        /// instead of being sent.
        public var maximumSubmitSize = WireLimits.maximumInboundFrameSize
        /// Why the pool refuses the run, as the pool link learns it (for the run's last words).
        package let refusal = PoolRefusalNote()

        /// Creates the settings.
        package init(endpoint: String, hello: WireHello, curve: (keyPair: ZMQCurveKeyPair, poolKey: String)? = nil) {
            self.endpoint = endpoint
            self.hello = hello
            self.curve = curve
        }
    }

    /// What a CURVE coordinator needs: its own key pair and the keys it admits.
    public struct CurveServer: Sendable {
        /// The coordinator's long-term key pair; workers are given its public key.
        public var keyPair: ZMQCurveKeyPair
        /// The workers that may join.
        public var authorizedKeys: AuthorizedKeys

        /// Creates the settings.
        public init(keyPair: ZMQCurveKeyPair, authorizedKeys: AuthorizedKeys) {
            self.keyPair = keyPair
            self.authorizedKeys = authorizedKeys
        }
    }

    /// A worker connected to the coordinator, as `flow-coordinator status RUN` lists it.
    public struct ConnectedWorker: Sendable, Equatable, Codable {
        public var name: String
        /// Its host name, from its READY.
        public var host: String
        public var slots: Int
        /// The labels it gave (`flow-worker --label`), beside `host` and `name` which every worker has.
        public var labels: [String: String]
        /// Whether its labels are known: a worker that has labels says them just after it joins.
        public var labelsKnown = true
        /// It is the pool this run goes through, not a worker.
        public var isPool = false

        /// Every label it has: `host`, `name`, then those it gave, which win.
        public var allLabels: [String: String] { FlowPlacement.labels(given: labels, host: host, name: name) }
    }

    /// A snapshot of the cluster, for progress output.
    public struct Status: Sendable {
        /// Connected workers.
        public var workers: Int
        /// Slots of all connected workers.
        public var slots: Int
        /// Tasks running on workers.
        public var running: Int
        /// Tasks waiting to start: for a worker, or in a worker's queue.
        public var queued: Int
    }
}
