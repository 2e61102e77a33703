import Flow
import Foundation
public import Logging
import Synchronization

/// Local `flow-worker` processes that a coordinator starts for itself (the embedded default) and
/// stops at the end. Public on purpose: a Swift blueprint run on a local cluster
/// (`examples/blueprint-on-cluster`) starts its workers with it.
public final class LocalWorkerPool: Sendable {
    private struct State {
        var processes: [Process] = []
        /// Whether the workers were sent SIGTERM (a second one must not follow).
        var terminated = false
    }

    private let state = Mutex(State())
    /// Left by each worker as it exits (its termination handler, which Foundation calls once it
    /// has reaped it): ``stop(grace:)`` is resumed by its notification, not by a sleep loop.
    private let exits = DispatchGroup()
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
        // Spawned side by side: each spawn takes a millisecond or two, and the run waits for the last
        // worker to boot.
        let count = max(1, count)
        // Each spawn writes its own slot: no lock is taken side by side. (Taken under a Mutex, the
        // appends were reported by ThreadSanitizer as an access race: Mutex on Linux is a futex,
        // which the sanitizer does not see.) `concurrentPerform` returns once every slot is written.
        let spawned = UnsafeMutableBufferPointer<Process?>.allocate(capacity: count)
        let errors = UnsafeMutableBufferPointer<String?>.allocate(capacity: count)
        spawned.initialize(repeating: nil)
        errors.initialize(repeating: nil)
        defer {
            spawned.deallocate()
            errors.deallocate()
        }
        nonisolated(unsafe) let slots = (spawned, errors)
        DispatchQueue.concurrentPerform(iterations: count) { offset in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = ["--connect", endpoint, "--name", "worker-\(offset + 1)", "--concurrency", String(concurrency),
                                 "--exit-with-parent", "--log-level", "warning"]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.standardError
            exits.enter()
            process.terminationHandler = { [exits] _ in exits.leave() }
            do {
                try process.run()
                slots.0[offset] = process
            } catch {
                exits.leave()
                slots.1[offset] = "\(path): \(error)"
            }
        }
        let started = spawned.compactMap { $0 }
        state.withLock { $0.processes = started }
        let failures = errors.compactMap { $0 }
        if let failure = failures.first {
            // Those that started are told to stop; nobody waits for them.
            end(grace: .seconds(5)) {}
            throw ClusterError.cannotStartWorkers(failure)
        }
    }

    /// The flow-worker beside the running executable, or `FLOW_WORKER_EXECUTABLE`.
    public static func defaultExecutable() -> String {
        if let path = ProcessInfo.processInfo.environment["FLOW_WORKER_EXECUTABLE"], !path.isEmpty { return path }
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("flow-worker").path
    }

    /// The workers' process ids.
    public var processIdentifiers: [Int32] { state.withLock { $0.processes.map(\.processIdentifier) } }

    /// Sends SIGTERM to each worker not yet told to stop, and returns at once: each finishes its
    /// running tasks, says goodbye and exits. ``stop(grace:)`` then waits for them.
    public func terminate() {
        let due = state.withLock { state in
            defer { state.terminated = true }
            return state.terminated ? [] : state.processes
        }
        for process in due where process.isRunning { process.terminate() }
    }

    /// Sends SIGTERM (unless ``terminate()`` did), waits up to `grace` for each worker to drain,
    /// then SIGKILLs those still running; returns once every worker has exited and been reaped.
    /// Resumed by the workers' exits (or the grace's deadline), never by a thread that waits.
    public func stop(grace: Duration = .seconds(5)) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = ResumeOnce(continuation)
            end(grace: grace) { once.resume(returning: ()) }
        }
    }

    /// Sends SIGTERM (unless ``terminate()`` did) and calls `done` once every worker has exited:
    /// when the last termination handler has run, or, at `grace`, after SIGKILL has ended those
    /// still running. Returns at once.
    private func end(grace: Duration, done: @escaping @Sendable () -> Void) {
        terminate()
        let all = state.withLock { state in
            defer { state.processes = [] }
            return state.processes
        }
        let (exits, logger) = (self.exits, self.logger)
        // Whichever comes first: the last exit, or the deadline; the other then does nothing.
        let settled = SettledFlag()
        exits.notify(queue: .global()) {
            if settled.settle() { done() }
        }
        let milliseconds = Int(clamping: grace.components.seconds &* 1000 + grace.components.attoseconds / 1_000_000_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(max(0, milliseconds))) {
            guard settled.settle() else { return }
            for process in all where process.isRunning {
                logger.warning("worker \(process.processIdentifier) did not stop within \(grace.shortText): killing it")
                kill(process.processIdentifier, SIGKILL)
            }
            // Reaped by Foundation, whose termination handlers leave the group.
            exits.notify(queue: .global(), execute: done)
        }
    }

    deinit {
        end(grace: .seconds(1)) {}
    }
}

/// Set by the first of two events; the second sees it set.
private final class SettledFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    /// Whether this call was the first.
    func settle() -> Bool { !flag.exchange(true, ordering: .acquiringAndReleasing) }
}
