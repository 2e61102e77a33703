import Foundation
import Logging

/// Local `flow-worker` processes that a coordinator starts for itself (the embedded default) and
/// stops at the end.
public final class LocalWorkerPool: @unchecked Sendable {
    private let lock = NSLock()
    private var processes: [Process] = []
    private let logger: Logger

    /// Starts `count` workers connected to `endpoint`.
    ///
    /// - Parameters:
    ///   - count: how many processes.
    ///   - endpoint: the coordinator's endpoint.
    ///   - concurrency: each worker's slots.
    ///   - executable: the `flow-worker` binary; the one beside this program when `nil`.
    ///   - logger: diagnostics.
    /// - Throws: ``ClusterError/cannotStartWorkers(_:)``.
    public init(count: Int, endpoint: String, concurrency: Int, executable: String? = nil, logger: Logger) throws {
        self.logger = logger
        let path = executable ?? Self.defaultExecutable()
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw ClusterError.cannotStartWorkers("no flow-worker executable at \(path); build it (swift build) or set FLOW_WORKER_EXECUTABLE")
        }
        for index in 1...max(1, count) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = ["--connect", endpoint, "--name", "worker-\(index)", "--concurrency", String(concurrency),
                                 "--exit-with-parent", "--log-level", "warning"]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.standardError
            do {
                try process.run()
            } catch {
                stop()
                throw ClusterError.cannotStartWorkers("\(path): \(error)")
            }
            lock.withLock { processes.append(process) }
        }
    }

    /// The flow-worker beside the running executable, or `FLOW_WORKER_EXECUTABLE`.
    public static func defaultExecutable() -> String {
        if let path = ProcessInfo.processInfo.environment["FLOW_WORKER_EXECUTABLE"], !path.isEmpty { return path }
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("flow-worker").path
    }

    /// The workers' process ids.
    public var processIdentifiers: [Int32] { lock.withLock { processes.map(\.processIdentifier) } }

    /// Sends SIGTERM, waits up to `grace` for each worker to drain, then SIGKILLs and reaps.
    public func stop(grace: Duration = .seconds(5)) {
        let all = lock.withLock {
            defer { processes = [] }
            return processes
        }
        for process in all where process.isRunning { process.terminate() }
        let deadline = ContinuousClock.now + grace
        for process in all {
            while process.isRunning && ContinuousClock.now < deadline { usleep(1_000) }
            if process.isRunning {
                logger.warning("worker \(process.processIdentifier) did not stop within \(grace.secondsText): killing it")
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
    }

    deinit {
        stop(grace: .seconds(1))
    }
}
