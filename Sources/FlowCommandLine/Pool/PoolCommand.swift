import ArgumentParser
import Flow
import FlowCluster
import Foundation
import Metrics
import ServiceLifecycle
import Synchronization
import UnixSignals
import ZeroMQ

/// `flow-coordinator pool`: a standing pool of workers that many runs share (docs/PROTOCOL.md §14).
struct PoolCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pool",
        abstract: "Serve a standing pool of workers that many runs share at once.",
        discussion: """
            Workers connect to the pool as to a coordinator (flow-worker --connect ENDPOINT); runs use it with \
            flow-coordinator run FLOW --pool ENDPOINT, and share its slots by their --share, each granted at most \
            --max-share (or its key's share=N in --authorized-clients); one client runs at most --max-runs-per-client \
            runs at once, and the rest wait. \
            flow-coordinator status --pool ENDPOINT shows its workers and runs. SIGHUP re-reads both key lists. \
            Stops on SIGTERM or SIGINT, telling every worker and run.
            """
    )

    @Option(name: .long, help: ArgumentHelp("The endpoint workers and runs connect to, e.g. tcp://0.0.0.0:5555.", valueName: "ENDPOINT"))
    var bind: String

    @Option(name: .long, help: ArgumentHelp("Encrypt and authenticate with CURVE, using this key pair (flow-coordinator keygen FILE). Default: $FLOW_CURVE_KEY.", valueName: "FILE"))
    var curveKey: String?

    @Option(name: .long, help: ArgumentHelp("With --curve-key: the workers' public keys, one per line. Default: $FLOW_AUTHORIZED_KEYS.", valueName: "FILE"))
    var authorizedKeys: String?

    @Option(name: .long, help: ArgumentHelp("With --curve-key: the public keys of the coordinators allowed to submit runs, one per line.", valueName: "FILE"))
    var authorizedClients: String?

    @Flag(name: .long, help: "Allow a plaintext --bind on an address other machines can reach: anyone who reaches it can join or submit runs and read their data.")
    var insecure = false

    @Option(name: .long, help: ArgumentHelp("Serve Prometheus metrics at http://HOST:PORT/metrics (a bare PORT listens on 127.0.0.1).", valueName: "HOST:PORT"))
    var metrics: String?

    @Option(name: .long, help: ArgumentHelp("Seconds a task waits for a worker that offers its op.", valueName: "SECONDS"))
    var workerTimeout: Double = 30

    @Option(name: .long, help: ArgumentHelp("Seconds between liveness checks (workers and runs announce their own heartbeat intervals).", valueName: "SECONDS"))
    var heartbeatInterval: Double = 1

    @Option(name: .long, help: ArgumentHelp("Missed heartbeats before a worker or run is declared gone.", valueName: "COUNT"))
    var liveness: Int = 3

    @Option(name: .long, help: ArgumentHelp("The largest share a run is granted, whatever its --share; a client's line in --authorized-clients may give its own (share=N).", valueName: "N"))
    var maxShare: Int = 4

    @Option(name: .long, help: ArgumentHelp("Runs one client (its CURVE key; without CURVE, its user@host) may have running at once; more wait for one to end.", valueName: "N"))
    var maxRunsPerClient: Int = 16

    @Option(name: .long, help: ArgumentHelp("Bytes of tasks one client may have waiting at the pool (e.g. 256MiB); a task past it fails, saying so.", valueName: "SIZE"))
    var maxQueuedBytes: String = "256MiB"

    @Option(name: .long, help: ArgumentHelp("trace, debug, info, notice, warning, error or critical (diagnostics on stderr).", valueName: "LEVEL"))
    var logLevel: String = "info"

    func validate() throws {
        if workerTimeout < 0 { throw ValidationError("--worker-timeout must not be negative") }
        if heartbeatInterval <= 0 { throw ValidationError("--heartbeat-interval must be positive") }
        if liveness < 1 { throw ValidationError("--liveness must be at least 1") }
        try validateCaps()
        if let metrics {
            do { _ = try MetricsEndpoint(parsing: metrics) } catch { throw ValidationError(error.description) }
        }
        let key = CurveOptions.path(curveKey, environment: "FLOW_CURVE_KEY")
        let workers = CurveOptions.path(authorizedKeys, environment: "FLOW_AUTHORIZED_KEYS")
        if key != nil || workers != nil || authorizedClients != nil {
            guard key != nil, workers != nil, authorizedClients != nil else {
                throw ValidationError("a CURVE pool needs --curve-key FILE, --authorized-keys FILE (its workers) and --authorized-clients FILE (its runs)")
            }
        } else if !CurveOptions.isLocal(bind), !insecure {
            throw ValidationError("--bind \(bind) listens beyond this machine in plaintext: anyone who reaches it could join as a worker, "
                + "submit runs and read their data. Give --curve-key FILE, --authorized-keys FILE and --authorized-clients FILE "
                + "(make keys with flow-coordinator keygen and flow-worker keygen), or --insecure to allow it anyway")
        }
    }

    /// The caps on what one client may take (docs/PROTOCOL.md §14.4, §14.5).
    private func validateCaps() throws {
        guard (1...Int(AuthorizedKeys.maximumShare)).contains(maxShare) else {
            throw ValidationError("--max-share \(maxShare) is out of range: give 1 to \(AuthorizedKeys.maximumShare)")
        }
        guard (1...100_000).contains(maxRunsPerClient) else {
            throw ValidationError("--max-runs-per-client \(maxRunsPerClient) is out of range: give 1 to 100000")
        }
        guard queuedBytesLimit != nil else {
            throw ValidationError("--max-queued-bytes \(maxQueuedBytes) is not a size from 1MiB to 1TiB: write e.g. 256MiB or 2GiB")
        }
    }

    /// `--max-queued-bytes` in bytes, `nil` when it is no size in range.
    private var queuedBytesLimit: Int? {
        guard let bytes = FlowByteSize.parse(maxQueuedBytes), (1 << 20...1 << 40).contains(bytes) else { return nil }
        return Int(bytes)
    }

    /// Both key lists, as the files say now.
    private func readKeys() throws(CurveKeyFileError) -> PoolKeys? {
        guard let workers = CurveOptions.path(authorizedKeys, environment: "FLOW_AUTHORIZED_KEYS"), let clients = authorizedClients else { return nil }
        return PoolKeys(workers: try AuthorizedKeys.read(at: workers), clients: try AuthorizedKeys.read(at: clients))
    }

    func run() async throws {
        ProcessSignals.clearInheritedMask()
        let logger = CommandLineLogging.logger(label: "flow-coordinator", level: logLevel)
        var configuration = FlowPool.Configuration(endpoint: bind)
        configuration.workerTimeout = .seconds(workerTimeout)
        configuration.heartbeatInterval = .seconds(heartbeatInterval)
        configuration.liveness = liveness
        configuration.maxShare = UInt32(maxShare)
        configuration.maxRunsPerClient = maxRunsPerClient
        configuration.maxQueuedBytes = queuedBytesLimit ?? configuration.maxQueuedBytes
        do {
            if let path = CurveOptions.path(curveKey, environment: "FLOW_CURVE_KEY"), let keys = try readKeys() {
                configuration.curve = (try CurveKeyFile.read(at: path), keys)
            }
        } catch {
            CommandLineLogging.printError(error.description)
            throw ExitCode(2)
        }
        if configuration.curve == nil, !CurveOptions.isLocal(bind) {
            CommandLineLogging.printDiagnostic("warning: --insecure: \(bind) takes plaintext workers and runs from anywhere")
        }
        let pool = try FlowPool(configuration: configuration, logger: logger)
        let endpoint: String
        do {
            endpoint = try await pool.start()
        } catch {
            CommandLineLogging.printError(String(describing: error))
            throw ExitCode(3)
        }
        let metricsServer = try await startMetrics(for: pool)
        let reloader = configuration.curve == nil ? nil : keyReloader(for: pool)
        announce(endpoint, curve: configuration.curve?.keyPair.publicKey)
        // The pool, its metrics server and its key reloader end together.
        var services: [any Service] = [pool]
        if let metricsServer { services.append(MetricsService(server: metricsServer)) }
        if let reloader { services.append(reloader) }
        let group = ServiceGroup(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        try await group.run()
    }

    /// Serves `--metrics` with the pool's gauges; a server that cannot start stops the pool and
    /// exits with code 2.
    private func startMetrics(for pool: FlowPool) async throws -> MetricsServer? {
        guard let metrics else { return nil }
        MetricsExport.bootstrap()
        let gauges = PoolMetrics()
        do {
            return try await MetricsExport.start(metrics, program: "flow-coordinator pool") { gauges.update(pool.status) }
        } catch {
            await pool.stop()
            CommandLineLogging.printError(error.description)
            throw ExitCode(2)
        }
    }

    /// Re-reads both key lists on SIGHUP.
    private func keyReloader(for pool: FlowPool) -> HangupReloader {
        HangupReloader { [self] in
            do {
                if let keys = try readKeys() {
                    pool.reloadKeys(keys)
                    CommandLineLogging.printDiagnostic("SIGHUP: \(keys.workers.names.count) worker key(s) and \(keys.clients.names.count) client key(s) read")
                }
            } catch {
                CommandLineLogging.printError("SIGHUP: kept the keys as they were: \(error)")
            }
        }
    }

    /// Says where the pool listens and how workers and runs reach it.
    private func announce(_ endpoint: String, curve publicKey: String?) {
        let connect = WorkerEndpoint.toConnect(bound: endpoint)
        // The key last on its line: Z85 has `)` and `;`, so nothing may follow it.
        let key = publicKey.map { " with CURVE; the pool's public key: \($0)" } ?? ""
        CommandLineLogging.printDiagnostic("""
            pool listening on \(endpoint)\(key)
              workers: flow-worker --connect \(connect)\(publicKey == nil ? "" : " --curve-key WORKER.key --coordinator-key KEY")
              runs:    flow-coordinator run FLOW --pool \(connect)\(publicKey == nil ? "" : " --curve-key CLIENT.key --pool-key KEY")
            """)
    }
}

/// The pool's gauges, set from its status at each scrape: workers, slots, busy slots, runs, tasks
/// waiting at the pool (the autoscaler's signal) and per run.
final class PoolMetrics: Sendable {
    private let workers = Gauge(label: "flow_pool_workers")
    private let slots = Gauge(label: "flow_pool_slots")
    private let busy = Gauge(label: "flow_pool_slots_busy")
    private let runs = Gauge(label: "flow_pool_runs")
    private let queued = Gauge(label: "flow_pool_tasks_queued")
    private let perRun = Mutex<[String: Gauge]>([:])

    func update(_ status: PoolStatus) {
        workers.record(status.workers.count)
        slots.record(status.slots)
        busy.record(status.busy)
        runs.record(status.runs.count)
        queued.record(status.queued)
        perRun.withLock { gauges in
            var seen = Set<String>()
            for run in status.runs {
                seen.insert(run.id)
                let gauge = gauges[run.id] ?? Gauge(label: "flow_pool_run_tasks_queued", dimensions: [("run", run.id)])
                gauges[run.id] = gauge
                gauge.record(run.queued)
            }
            for (id, gauge) in gauges where !seen.contains(id) {
                gauge.record(0)
                gauges[id] = nil
            }
        }
    }
}
