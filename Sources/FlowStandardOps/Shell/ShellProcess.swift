#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Subprocess
import Synchronization
#if canImport(System)
import System
#else
import SystemPackage
#endif

/// One run of a program on swift-subprocess: collects its stdout and the tail of its stderr,
/// enforces a time limit (SIGTERM to its process group, SIGKILL 2 s later), and returns once the
/// program has been reaped.
///
/// The program leads a process group of its own, so signals reach everything it started.
/// swift-subprocess spawns it with an empty signal mask and default dispositions (a program
/// started from a concurrency thread would otherwise inherit blocked signals), stops reading its
/// pipes when it exits even if something it left in the background holds them, and tears it down
/// when the calling task is cancelled. What it left running is killed once it has exited and its
/// output is read, while it is still unreaped, so its group id cannot have been reused.
struct ShellProcess: Sendable {
    /// How the program ended.
    enum Termination: Sendable, Equatable {
        case exit(Int32)
        case signal(Int32)
    }

    /// What the run gave.
    struct Outcome: Sendable {
        var termination: Termination
        var standardOutput: Data
        /// The last bytes of stderr (at most ``ShellProcess/errorTailLimit``).
        var standardErrorTail: Data
        var timedOut: Bool
    }

    static let errorTailLimit = 64 * 1024
    /// The wait between SIGTERM and SIGKILL.
    static let killGrace = Duration.seconds(2)

    let executable: URL
    let arguments: [String]
    let environment: [String: String]
    let workingDirectory: URL?
    /// Seconds before the program is stopped.
    let timeLimit: Double

    /// Prepares a run.
    ///
    /// - Parameters:
    ///   - executable: the program's absolute path.
    ///   - arguments: the arguments after argv[0].
    ///   - environment: the child's whole environment.
    ///   - workingDirectory: where it starts, or `nil` for the current directory.
    ///   - timeLimit: seconds before it is stopped.
    init(executable: URL, arguments: [String], environment: [String: String], workingDirectory: URL?, timeLimit: Double) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.workingDirectory = workingDirectory
        self.timeLimit = timeLimit
    }

    /// Starts the program and waits for it and its output. Cancelling the calling task stops it
    /// the way the time limit does, and the call then throws `CancellationError`.
    ///
    /// - Throws: ``FlowStandardOpError/Code/launchFailed`` when it cannot be started.
    func run() async throws -> Outcome {
        let timer = TimeLimitFlag()
        let running = RunningGroup()
        let finished = try await withThrowingTaskGroup(of: Result<Outcome, any Error>?.self) { group in
            group.addTask {
                // swift-subprocess tears the program down from a task of its own; the SIGTERM is
                // sent here at once as well, so a process that exits right after cancelling (a
                // worker told to stop) does not leave the program running.
                await withTaskCancellationHandler {
                    do { return .success(try await self.runProgram(running)) } catch { return .failure(error) }
                } onCancel: {
                    running.signal(SIGTERM)
                }
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(Int64(timeLimit * 1000)))
                // A program that has exited by its limit is not stopped at it: what is left is
                // reading its output, which a busy machine's task pool can hold up past the limit
                // (a program that exited in 10 ms was once reported killed at its 20 s limit).
                if !Task.isCancelled, !running.hasExited { timer.fire() }
                return nil
            }
            var finished: Result<Outcome, any Error>?
            while let next = try await group.next() {
                if let next {
                    finished = next
                    group.cancelAll()
                } else if timer.fired {
                    // Cancelling the program's task runs its teardown sequence.
                    group.cancelAll()
                }
            }
            return finished
        }
        if timer.fired {
            // Stopped at its limit: whatever it wrote, however it ended.
            var outcome = (try? finished?.get()) ?? Outcome(termination: .signal(SIGTERM), standardOutput: Data(), standardErrorTail: Data(), timedOut: true)
            outcome.timedOut = true
            return outcome
        }
        guard let outcome = try finished?.get() else { throw CancellationError() }
        try Task.checkCancellation()
        return outcome
    }

    private func runProgram(_ running: RunningGroup) async throws -> Outcome {
        var options = PlatformOptions()
        options.processGroupID = 0
        options.teardownSequence = [
            .gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: Self.killGrace),
            .send(signal: .kill, toProcessGroup: true, allowedDurationToNextStep: .seconds(1)),
        ]
        var variables: [Environment.Key: String] = [:]
        for (name, value) in environment {
            if let key = Environment.Key(rawValue: name) { variables[key] = value }
        }
        let configuration = Configuration(
            executable: .path(FilePath(executable.path)), arguments: Arguments(arguments), environment: .custom(variables),
            workingDirectory: workingDirectory.map { FilePath($0.path) }, platformOptions: options)
        let result: ExecutionResult<(Data, Data), SequenceOutput, SequenceOutput>
        do {
            result = try await Subprocess.run(configuration, input: .none, output: .sequence, error: .sequence) { execution in
                let pid = execution.processIdentifier.value
                running.started(pid)
                async let output = Self.collect(execution.standardOutput, keepingLast: nil)
                let errors = try await Self.collect(execution.standardError, keepingLast: Self.errorTailLimit)
                let collected = try await (output, errors)
                // The pipes are closed or the program has exited (swift-subprocess stops reading
                // then). Wait for the exit without reaping, then clear its group.
                await Self.waitForExitUnreaped(pid)
                running.signal(SIGKILL)
                running.ended()
                return collected
            }
        } catch let error as SubprocessError {
            throw FlowStandardOpError(.launchFailed, "cannot start \(executable.path): \(error)")
        }
        let termination: Termination
        switch result.terminationStatus {
        case .exited(let code): termination = .exit(code)
        case .signaled(let signal): termination = .signal(signal)
        }
        return Outcome(termination: termination, standardOutput: result.closureResult.0, standardErrorTail: result.closureResult.1, timedOut: false)
    }

    /// Everything a stream gives, or only its last `limit` bytes.
    private static func collect(_ stream: SubprocessOutputSequence, keepingLast limit: Int?) async throws -> Data {
        var data = Data()
        for try await buffer in stream {
            buffer.withUnsafeBytes { data.append(contentsOf: $0) }
            if let limit, data.count > 2 * limit { data = Data(data.suffix(limit)) }
        }
        if let limit, data.count > limit { data = Data(data.suffix(limit)) }
        return data
    }

    /// Returns once `pid` has exited, leaving it a zombie for swift-subprocess to reap
    /// (`waitid` with `WNOWAIT`). Cancellation does not cut it short: the teardown ends the program.
    private static func waitForExitUnreaped(_ pid: pid_t) async {
        var pause = 1
        while true {
            var info = siginfo_t()
            let result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
            // ECHILD and other errors: nothing left to wait for.
            if result != 0 { return }
            if info._sifields._sigchld.si_pid == pid { return }
            await uncancellableSleep(milliseconds: pause)
            pause = min(pause * 2, 50)
        }
    }

    private static func uncancellableSleep(milliseconds: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { continuation.resume() }
        }
    }
}

/// The program's process group while it may be signalled: from its start until it has exited
/// and what it left is killed, before swift-subprocess reaps it (after which its id may be reused).
private final class RunningGroup: Sendable {
    private enum Phase {
        case starting
        case running(pid_t)
        case ended
    }

    private let phase = Mutex(Phase.starting)

    func started(_ pid: pid_t) {
        phase.withLock { $0 = .running(pid) }
    }

    func ended() {
        phase.withLock { $0 = .ended }
    }

    /// Whether the program (the group's leader) has exited: its end was seen, or the kernel
    /// says so (`waitid` with `WNOWAIT`, leaving it for swift-subprocess to reap). `false`
    /// before it started.
    var hasExited: Bool {
        phase.withLock { phase in
            switch phase {
            case .starting: return false
            case .ended: return true
            case .running(let pid):
                var info = siginfo_t()
                return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info._sifields._sigchld.si_pid == pid
            }
        }
    }

    /// Signals the whole group, if it still may be.
    func signal(_ number: Int32) {
        phase.withLock { phase in
            if case .running(let pid) = phase { _ = kill(-pid, number) }
        }
    }
}

/// Set once the time limit has passed.
private final class TimeLimitFlag: Sendable {
    private let state = Mutex(false)

    var fired: Bool { state.withLock { $0 } }

    func fire() { state.withLock { $0 = true } }
}
