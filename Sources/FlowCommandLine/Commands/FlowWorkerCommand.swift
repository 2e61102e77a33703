public import ArgumentParser
public import Flow
import FlowCluster
import FlowStandardOps
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals
import ZeroMQ

/// `flow-worker`: connects to a coordinator and runs the ops of a registry.
///
/// Build your own worker with your own ops by handing it your registry:
///
/// ```swift
/// var registry = FlowOperationRegistry.standard
/// registry.register("ResizeOp") { params in ResizeOp(width: try params.integer("width")) }
/// await FlowWorkerCommand.main(registry: registry)
/// ```
public struct FlowWorkerCommand: AsyncParsableCommand {
    /// The ops this worker offers: the stock ones, or those given to ``main(registry:)`` (a task
    /// local: passed in for the command's run, not a global anyone may change meanwhile).
    @TaskLocal public static var registry = FlowOperationRegistry.standard

    /// Runs `flow-worker` with the command line's arguments and the ops of `registry`, and exits
    /// with the Flow exit codes (``CommandMain``).
    public static func main(registry: FlowOperationRegistry) async -> Never {
        let status = await $registry.withValue(registry) { await CommandMain.status(of: FlowWorkerCommand.self) }
        Foundation.exit(status)
    }

    public static let configuration = CommandConfiguration(
        commandName: "flow-worker",
        abstract: "Run flow ops for a flow-coordinator.",
        discussion: """
            Connects to a coordinator (flow-coordinator run --bind ENDPOINT), offers its ops, and runs up to \
            --concurrency tasks at once. Reconnects when the coordinator restarts. On SIGTERM or SIGINT it \
            finishes the running tasks, says goodbye and exits 0.
            """,
        version: FlowVersion.current,
        subcommands: [KeygenCommand.self]
    )

    @Option(name: .long, help: ArgumentHelp("Encrypt and authenticate with CURVE, using this key pair (flow-worker keygen FILE). Default: $FLOW_CURVE_KEY.", valueName: "FILE"))
    var curveKey: String?

    @Option(name: .long, help: ArgumentHelp("With --curve-key: the coordinator's public key (40 characters, as its keygen printed), or its key file. Default: $FLOW_COORDINATOR_KEY.", valueName: "KEY"))
    var coordinatorKey: String?

    @Option(name: .long, help: ArgumentHelp("The coordinator's endpoint, e.g. tcp://10.0.0.5:5555 or ipc:///tmp/flow.sock.", valueName: "ENDPOINT"))
    var connect: String?

    @Option(name: .long, help: ArgumentHelp("How many tasks run at once (default: the number of cores).", valueName: "N"))
    var concurrency: Int?

    @Option(name: .long, help: ArgumentHelp("The name shown in summaries (default: HOST-PID).", valueName: "NAME"))
    var name: String?

    @Option(name: .long, help: ArgumentHelp("A label a step's on: matches, e.g. role=recorder (repeatable). Every worker also has host=HOSTNAME and name=NAME; a label given here wins over those. More: $FLOW_LABELS, KEY=VALUE pairs separated by commas (--label wins).", valueName: "KEY=VALUE"))
    var label: [String] = []

    @Flag(name: .long, help: "List the ops this worker offers and exit.")
    var listOps = false

    @Option(name: .long, help: ArgumentHelp("Seconds between heartbeats.", valueName: "SECONDS"))
    var heartbeatInterval: Double = 1

    @Option(name: .long, help: ArgumentHelp("Missed heartbeats before reconnecting.", valueName: "COUNT"))
    var liveness: Int = 3

    @Option(name: .long, help: ArgumentHelp("The longest wait, in seconds, between attempts to reach a coordinator that is not there (yet): a coordinator started later is found within it.", valueName: "SECONDS"))
    var reconnectInterval: Double = 0.1

    @Option(name: .long, help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "LEVEL"))
    var logLevel: String = "info"

    @Option(name: .long, help: ArgumentHelp("Serve Prometheus metrics at http://HOST:PORT/metrics (a bare PORT listens on 127.0.0.1).", valueName: "HOST:PORT"))
    var metrics: String?

    @Flag(name: .long, help: .hidden)
    var exitWithParent = false

    public init() {}

    public func validate() throws {
        if let concurrency, concurrency < 1 { throw ValidationError("--concurrency must be at least 1") }
        if heartbeatInterval <= 0 { throw ValidationError("--heartbeat-interval must be positive") }
        if liveness < 1 { throw ValidationError("--liveness must be at least 1") }
        if !(0.01...60).contains(reconnectInterval) { throw ValidationError("--reconnect-interval must be between 0.01 and 60 seconds") }
        if let metrics {
            do { _ = try MetricsEndpoint(parsing: metrics) } catch { throw ValidationError(error.description) }
        }
        if Logger.Level(rawValue: logLevel) == nil { throw ValidationError("unknown --log-level '\(logLevel)'") }
        do { _ = try Labels.parse(labelTexts) } catch { throw ValidationError("--label or $FLOW_LABELS: \(error.description)") }
        let key = CurveOptions.path(curveKey, environment: "FLOW_CURVE_KEY")
        let coordinator = CurveOptions.path(coordinatorKey, environment: "FLOW_COORDINATOR_KEY")
        if (key == nil) != (coordinator == nil) {
            throw ValidationError("CURVE needs both --curve-key FILE and --coordinator-key KEY")
        }
    }

    /// The labels as written: `$FLOW_LABELS` (comma-separated, as a systemd unit's or a pod's
    /// environment sets them), then each `--label`, which wins over them.
    private var labelTexts: [String] {
        let environment = ProcessInfo.processInfo.environment["FLOW_LABELS"] ?? ""
        return environment.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } + label
    }

    /// The CURVE settings the options name, `nil` for plaintext.
    private func curveClient() throws(CurveKeyFileError) -> FlowWorker.CurveClient? {
        guard let key = CurveOptions.path(curveKey, environment: "FLOW_CURVE_KEY"),
              let coordinator = CurveOptions.path(coordinatorKey, environment: "FLOW_COORDINATOR_KEY") else { return nil }
        let pair = try CurveKeyFile.read(at: key)
        if CurveKey.isValid(coordinator) { return FlowWorker.CurveClient(keyPair: pair, coordinatorKey: coordinator) }
        guard let text = try? String(contentsOfFile: coordinator, encoding: .utf8) else {
            throw CurveKeyFileError(path: coordinator, "--coordinator-key is neither a public key (40 Z85 characters) nor a readable file")
        }
        // A file with just the public key (what keygen printed), or a key file.
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if CurveKey.isValid(trimmed) { return FlowWorker.CurveClient(keyPair: pair, coordinatorKey: trimmed) }
        return FlowWorker.CurveClient(keyPair: pair, coordinatorKey: try CurveKeyFile.read(at: coordinator).publicKey)
    }

    public func run() async throws {
        ProcessSignals.clearInheritedMask()
        // S3 parts (16 MiB by default) go back to the system once sent; upload chunks (1 MiB) are reused.
        MemoryTuning.returnBigBuffersToTheSystem(above: MemoryTuning.workerThreshold)
        // Checked here, not in validate(): ArgumentParser validates this command for `keygen` too.
        if !listOps && connect == nil { throw ValidationError("missing --connect ENDPOINT (or --list-ops)") }
        let registry = Self.registry
        if listOps {
            for name in registry.names {
                let entry = registry.entry(named: name)!
                var keys = ""
                if !entry.primaryInputParamKey.isEmpty || !entry.primaryOutputParamKey.isEmpty {
                    keys = "  [group: \(entry.primaryInputParamKey) -> \(entry.primaryOutputParamKey)]"
                }
                print("\(name)\(keys)\n    \(entry.summary)")
                for parameter in entry.parameters ?? [] {
                    let kind = parameter.kind.map { " (\($0))" } ?? ""
                    print("      \(parameter.name)\(kind)\(parameter.summary.isEmpty ? "" : ": \(parameter.summary)")")
                }
            }
            return
        }
        var logger = CommandLineLogging.logger(label: "flow-worker", level: logLevel)
        var configuration = FlowWorker.Configuration(endpoint: connect!, name: name, concurrency: concurrency ?? ProcessInfo.processInfo.activeProcessorCount)
        configuration.heartbeatInterval = .milliseconds(Int64((heartbeatInterval * 1000).rounded()))
        configuration.liveness = liveness
        configuration.labels = (try? Labels.parse(labelTexts)) ?? [:]
        configuration.reconnectInterval = .milliseconds(Int64((reconnectInterval * 1000).rounded()))
        do {
            configuration.curve = try curveClient()
        } catch {
            CommandLineLogging.printError(error.description)
            throw ExitCode(2)
        }
        logger[metadataKey: "worker.name"] = "\(configuration.name)"
        var metricsServer: MetricsServer?
        if let metrics {
            MetricsExport.bootstrap()
            configuration.metrics = WorkerMetrics(slots: configuration.concurrency)
            do {
                metricsServer = try await MetricsExport.start(metrics, program: "flow-worker")
            } catch {
                CommandLineLogging.printError(error.description)
                throw ExitCode(2)
            }
        }
        let worker = try FlowWorker(configuration: configuration, registry: registry, logger: logger)
        if exitWithParent {
            // As if SIGTERM arrived: the service group shuts the worker down gracefully.
            ProcessSignals.signalWhenParentExits(SIGTERM)
        }
        let group = ServiceGroup(services: [worker], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        do {
            try await group.run()
            await metricsServer?.stop()
        } catch let error as ClusterError {
            await metricsServer?.stop()
            CommandLineLogging.printError(error.description)
            throw ExitCode(3)
        }
    }
}
