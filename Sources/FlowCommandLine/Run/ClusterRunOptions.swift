import ArgumentParser
import FlowCluster
import Foundation

/// The options `run` and `resume` share: where the workers come from, and what the run writes.
struct ClusterRunOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Wait for workers on this endpoint instead of starting local ones.", valueName: "ENDPOINT"))
    var bind: String?

    @Option(name: .long, help: ArgumentHelp("Run the tasks on the workers of a standing pool (flow-coordinator pool) instead of binding or starting local workers.", valueName: "ENDPOINT"))
    var pool: String?

    /// Whether the workers are others' (`--bind`, `--pool`), which may offer ops this program does
    /// not know (a worker built with its own registry, or in another language): a flow's op names
    /// are then not checked against the stock ones, and a task whose op no worker offers waits for
    /// one (§14.4 at a pool) until `--worker-timeout`.
    var workersMayOfferOtherOps: Bool { bind != nil || pool != nil }

    @Option(name: .long, help: ArgumentHelp("With --pool: the pool's public key (CURVE; give this coordinator's key pair with --curve-key).", valueName: "KEY"))
    var poolKey: String?

    @Option(name: .long, help: ArgumentHelp("With --pool: this run's weight in the pool's fair share (a run with --share 2 gets twice the slots of one with 1 while both have work).", valueName: "N"))
    var share: Int = 1

    @Option(name: .long, help: ArgumentHelp("With --bind: encrypt and authenticate with CURVE, using this key pair (flow-coordinator keygen FILE); with --pool: this coordinator's key pair. Default: $FLOW_CURVE_KEY.", valueName: "FILE"))
    var curveKey: String?

    @Option(name: .long, help: ArgumentHelp("With --curve-key: the workers' public keys, one per line (re-read on SIGHUP). Default: $FLOW_AUTHORIZED_KEYS.", valueName: "FILE"))
    var authorizedKeys: String?

    @Flag(name: .long, help: "Allow a plaintext --bind on an address other machines can reach: anyone who reaches it can join and read the buckets.")
    var insecure = false

    @Option(name: .long, help: ArgumentHelp("With --bind: wait until N workers have joined before the flow starts (at most --worker-timeout seconds).", valueName: "N"))
    var minWorkers: Int = 0

    /// `--workers` when not given.
    static let defaultWorkers = 2
    /// `--concurrency` when not given.
    static let defaultConcurrency = 4

    @Option(name: .customLong("workers"), help: ArgumentHelp("Local workers to start (without --bind or --pool; default: \(Self.defaultWorkers)).", valueName: "N"))
    var workersOption: Int?

    /// Local workers to start.
    var workers: Int { workersOption ?? Self.defaultWorkers }

    @Option(name: .long, help: ArgumentHelp("Tasks each local worker runs at once.", valueName: "N"))
    var concurrency: Int = Self.defaultConcurrency

    @Option(name: .long, help: ArgumentHelp("Seconds a task waits for a worker that offers its op.", valueName: "SECONDS"))
    var workerTimeout: Double = 30

    @Option(name: .long, help: ArgumentHelp("Also write the summary to FILE.", valueName: "FILE"))
    var summary: String?

    @Option(name: .long, help: ArgumentHelp("Write a machine-readable report of the run (bucket, every op with its worker, times, state, log lines) to FILE.", valueName: "FILE"))
    var json: String?

    @Option(name: .long, help: ArgumentHelp("Write one JSON line per uploaded object (target, size, algorithm, checksum, etag) to FILE.", valueName: "FILE"))
    var manifest: String?

    @Option(name: .long, help: ArgumentHelp("Serve Prometheus metrics at http://HOST:PORT/metrics while the run lasts (a bare PORT listens on 127.0.0.1).", valueName: "HOST:PORT"))
    var metrics: String?

    @Option(name: .long, help: ArgumentHelp("Write a picture of the run to FILE: one self-contained HTML page with a bar per op attempt on a lane per worker slot.", valueName: "FILE.html"))
    var timeline: String?

    @Flag(name: .long, help: "No progress output on stderr.")
    var quiet = false

    @Flag(name: .long, help: "Print every line of the summary. By default a group of more than 100 elements shows its first 10 elements, every failed one, and a count of the rest (--summary FILE always writes everything).")
    var fullSummary = false

    @Option(name: .long, help: ArgumentHelp("Seconds between heartbeats.", valueName: "SECONDS"))
    var heartbeatInterval: Double = 1

    @Option(name: .long, help: ArgumentHelp("Missed heartbeats before a worker is declared dead.", valueName: "COUNT"))
    var liveness: Int = 3

    @Option(name: .long, help: ArgumentHelp("trace, debug, info, notice, warning, error or critical (diagnostics on stderr).", valueName: "LEVEL"))
    var logLevel: String = "warning"

    func validate() throws {
        if let pool {
            if bind != nil { throw ValidationError("--pool and --bind exclude each other: the pool's workers run the tasks, so this coordinator binds nothing") }
            if workersOption != nil { throw ValidationError("--pool and --workers exclude each other: the pool's workers run the tasks (start more with flow-worker --connect \(pool))") }
            if minWorkers > 0 { throw ValidationError("--min-workers goes with --bind, not --pool") }
            if share < 1 || share > 1_000_000 { throw ValidationError("--share must be from 1 to 1000000") }
            if authorizedKeys != nil { throw ValidationError("--authorized-keys goes with --bind; a pool's clients need --curve-key and --pool-key") }
            let key = CurveOptions.path(curveKey, environment: "FLOW_CURVE_KEY")
            if (poolKey != nil) != (key != nil) {
                throw ValidationError("a CURVE pool needs both --pool-key KEY (the pool's public key) and --curve-key FILE (this coordinator's key pair)")
            }
            if let poolKey, !CurveKey.isValid(poolKey) {
                throw ValidationError("--pool-key '\(poolKey.prefix(60))' is not a public key (40 Z85 characters, as the pool prints it)")
            }
            try validateCommon()
            return
        }
        if poolKey != nil { throw ValidationError("--pool-key goes with --pool") }
        if share != 1 { throw ValidationError("--share goes with --pool") }
        try validateCommon()
        if workers < 1 { throw ValidationError("--workers must be at least 1") }
        if minWorkers < 0 { throw ValidationError("--min-workers must not be negative") }
        if minWorkers > 0 && bind == nil { throw ValidationError("--min-workers goes with --bind (local workers are always waited for)") }
        if concurrency < 1 { throw ValidationError("--concurrency must be at least 1") }
        let key = CurveOptions.path(curveKey, environment: "FLOW_CURVE_KEY")
        let authorized = CurveOptions.path(authorizedKeys, environment: "FLOW_AUTHORIZED_KEYS")
        if key != nil || authorized != nil {
            guard let bind else { throw ValidationError("--curve-key and --authorized-keys go with --bind (local workers talk over a private ipc:// socket)") }
            guard key != nil, authorized != nil else {
                throw ValidationError("CURVE needs both --curve-key FILE and --authorized-keys FILE (for --bind \(bind))")
            }
        } else if let bind, !CurveOptions.isLocal(bind), !insecure {
            throw ValidationError("""
                --bind \(bind) listens beyond this machine in plaintext: anyone who reaches it could join as a worker \
                and read every bucket. Give --curve-key FILE and --authorized-keys FILE (make keys with \
                flow-coordinator keygen and flow-worker keygen), or --insecure to allow it anyway
                """)
        }
    }

    /// The checks every kind of run shares.
    private func validateCommon() throws {
        if workerTimeout < 0 { throw ValidationError("--worker-timeout must not be negative") }
        if heartbeatInterval <= 0 { throw ValidationError("--heartbeat-interval must be positive") }
        if liveness < 1 { throw ValidationError("--liveness must be at least 1") }
        if let metrics {
            do { _ = try MetricsEndpoint(parsing: metrics) } catch { throw ValidationError(error.description) }
        }
    }

    /// The pool settings the options name, `nil` without `--pool`.
    func poolOptions() throws(CurveKeyFileError) -> ClusterRun.Options.Pool? {
        guard let pool else { return nil }
        var options = ClusterRun.Options.Pool(endpoint: pool, share: UInt32(share))
        if let poolKey, let key = CurveOptions.path(curveKey, environment: "FLOW_CURVE_KEY") {
            options.curve = (try CurveKeyFile.read(at: key), poolKey)
        }
        return options
    }

    /// The CURVE settings the options name, `nil` for plaintext.
    func curveServer() throws(CurveKeyFileError) -> FlowCoordinator.CurveServer? {
        guard pool == nil, let key = CurveOptions.path(curveKey, environment: "FLOW_CURVE_KEY"),
              let authorized = CurveOptions.path(authorizedKeys, environment: "FLOW_AUTHORIZED_KEYS") else { return nil }
        return FlowCoordinator.CurveServer(keyPair: try CurveKeyFile.read(at: key), authorizedKeys: try AuthorizedKeys.read(at: authorized))
    }

    /// The options that say where a run's workers come from, as given (defaults left out), for
    /// the command that resumes it: `--bind` with its CURVE files, `--insecure` and
    /// `--min-workers`, or a local cluster's `--workers` and `--concurrency`. CURVE files that
    /// came from the environment stay there.
    var workerArguments: [String] {
        if let pool {
            var arguments = ["--pool", pool]
            if let poolKey { arguments += ["--pool-key", poolKey] }
            if let curveKey { arguments += ["--curve-key", curveKey] }
            if share != 1 { arguments += ["--share", String(share)] }
            return arguments
        }
        guard let bind else {
            return (workers == Self.defaultWorkers ? [] : ["--workers", String(workers)])
                + (concurrency == Self.defaultConcurrency ? [] : ["--concurrency", String(concurrency)])
        }
        var arguments = ["--bind", bind]
        if let curveKey { arguments += ["--curve-key", curveKey] }
        if let authorizedKeys { arguments += ["--authorized-keys", authorizedKeys] }
        if insecure { arguments.append("--insecure") }
        if minWorkers > 0 { arguments += ["--min-workers", String(minWorkers)] }
        return arguments
    }

    /// The authorised-keys file, for SIGHUP.
    var authorizedKeysPath: String? { CurveOptions.path(authorizedKeys, environment: "FLOW_AUTHORIZED_KEYS") }

    /// The cluster's settings, with the stock worker's ops.
    var cluster: ClusterRun.Options {
        var options = ClusterRun.Options()
        options.bind = bind
        options.workers = workers
        options.concurrency = concurrency
        options.workerTimeout = .seconds(workerTimeout)
        options.heartbeatInterval = .seconds(heartbeatInterval)
        options.registry = FlowWorkerCommand.registry
        options.liveness = liveness
        options.minimumWorkers = minWorkers
        return options
    }
}
