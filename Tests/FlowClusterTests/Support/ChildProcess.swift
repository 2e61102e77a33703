import FlowTestSupport
import Foundation
import Testing

/// A program a test started: its output collected as it comes, and waits that always end.
///
/// Every wait has a time-out; a wait that times out records an issue and SIGKILLs the child
/// instead of hanging the test. Children started from Swift Testing's threads inherit a mask that
/// blocks SIGTERM, so ``terminate(grace:)`` follows SIGTERM with SIGKILL.
final class ChildProcess: @unchecked Sendable {
    /// How the child ended.
    struct Termination: Sendable, Equatable, CustomStringConvertible {
        /// The exit status, or the signal number when `signalled`.
        var status: Int32
        /// Whether a signal ended it.
        var signalled: Bool

        static func exit(_ status: Int32) -> Termination { Termination(status: status, signalled: false) }
        static func signal(_ number: Int32) -> Termination { Termination(status: number, signalled: true) }

        var description: String { signalled ? "killed by signal \(status)" : "exit \(status)" }
    }

    /// The name used in issues (`coordinator`, `w1`, ...).
    let label: String
    let arguments: [String]
    private let process = Process()
    private let lock = NSLock()
    private var stdoutData = Data()
    private var stderrData = Data()
    private var openStreams = 2
    /// How the child ended as the kernel said it before Foundation knew (``termination``).
    private var peeked: Termination?

    /// Starts `executable` with `arguments`; stdin is /dev/null, stdout and stderr are collected.
    init(label: String, executable: URL, arguments: [String], environment: [String: String]? = nil) throws {
        self.label = label
        self.arguments = arguments
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = FileHandle.nullDevice
        let outPipe = Pipe()
        let errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        collect(outPipe.fileHandleForReading, intoStdout: true)
        collect(errPipe.fileHandleForReading, intoStdout: false)
        do {
            // Tied to the test process: a killed test run leaves no worker or coordinator behind
            // (a standing worker would wait for its next coordinator for good). The signal mask
            // stays this thread's, as before.
            try ProcessLaunch.run(process, unblockingSignals: false)
        } catch {
            outPipe.fileHandleForReading.readabilityHandler = nil
            errPipe.fileHandleForReading.readabilityHandler = nil
            throw error
        }
    }

    private func collect(_ handle: FileHandle, intoStdout: Bool) {
        handle.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self else {
                handle.readabilityHandler = nil
                return
            }
            if data.isEmpty {
                handle.readabilityHandler = nil
                lock.withLock { openStreams -= 1 }
            } else {
                lock.withLock {
                    if intoStdout { stdoutData.append(data) } else { stderrData.append(data) }
                }
            }
        }
    }

    // MARK: State

    var processIdentifier: Int32 { process.processIdentifier }
    /// Whether the child still runs. Foundation learns of a child's end from SIGCHLD, and a loaded
    /// test process has been seen to miss one (a worker that had logged "stopped", SIGKILLed 20 s
    /// later, still "running" 5 s after that); so the kernel is asked too, without reaping.
    var isRunning: Bool { termination == nil }

    /// Everything the child wrote to stdout so far.
    var stdout: String { lock.withLock { String(decoding: stdoutData, as: UTF8.self) } }
    /// Everything the child wrote to stderr so far.
    var stderr: String { lock.withLock { String(decoding: stderrData, as: UTF8.self) } }

    /// How it ended, `nil` while it runs.
    ///
    /// What the kernel said is kept: Foundation may reap the child between two questions and
    /// still say it runs for a moment, when the kernel no longer knows it (a `termination` of
    /// `nil` right after `isRunning` said `false` failed a test).
    var termination: Termination? {
        if !process.isRunning {
            return process.terminationReason == .uncaughtSignal ? .signal(process.terminationStatus) : .exit(process.terminationStatus)
        }
        return lock.withLock {
            if peeked == nil { peeked = Self.peek(process.processIdentifier) }
            return peeked
        }
    }

    /// How child `pid` ended if it has ended and is not reaped yet, read with `WNOWAIT` so that
    /// Foundation still reaps it; `nil` while it runs (or once it is reaped).
    private static func peek(_ pid: Int32) -> Termination? {
        var info = siginfo_t()
        guard waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0, info._sifields._sigchld.si_pid == pid else {
            return nil
        }
        let status = info._sifields._sigchld.si_status
        return info.si_code == CLD_EXITED ? .exit(status) : .signal(status)
    }

    /// stdout and stderr for an issue's message.
    var transcript: String {
        "--- \(label) \(arguments.joined(separator: " "))\n--- stdout:\n\(stdout)--- stderr:\n\(stderr)---"
    }

    // MARK: Waits

    /// Waits until stderr contains `text`.
    ///
    /// - Returns: whether it appeared; records an issue (with the transcript) when it did not
    ///   within `timeout` seconds or the child exited without writing it.
    @discardableResult
    func waitForStderr(containing text: String, timeout: Double, sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        let found = await poll(timeout: timeout) { self.stderr.contains(text) || !self.isRunning }
        if stderr.contains(text) { return true }
        if found { await waitForStreamsToClose(timeout: 1) }
        if stderr.contains(text) { return true }
        Issue.record("\(label): no '\(text)' on stderr within \(timeout) s (\(isRunning ? "still running" : "exited"))\n\(transcript)",
                     sourceLocation: sourceLocation)
        return false
    }

    /// Waits until stdout or stderr satisfies `condition`, without recording an issue.
    func waitForOutput(timeout: Double, until condition: @escaping @Sendable (_ stdout: String, _ stderr: String) -> Bool) async -> Bool {
        await poll(timeout: timeout) { condition(self.stdout, self.stderr) }
    }

    /// Waits for the child to exit and for its output to be read to the end.
    ///
    /// - Returns: how it ended, or `nil` after recording an issue and SIGKILLing it when it did
    ///   not exit within `timeout` seconds.
    @discardableResult
    func waitForExit(timeout: Double, sourceLocation: SourceLocation = #_sourceLocation) async -> Termination? {
        let exited = await poll(timeout: timeout) { !self.isRunning }
        guard exited else {
            Issue.record("\(label) did not exit within \(timeout) s: killing it\n\(transcript)", sourceLocation: sourceLocation)
            kill()
            return nil
        }
        // Up to 10 s: on a loaded machine reading the pipes can lag well behind the exit, and a
        // test that read stdout too early saw a summary cut off mid-line (CondensedSummaryTests,
        // once, in a clean-clone CI run). A stream closes at its end, so a normal exit waits
        // only as long as the reading takes.
        await waitForStreamsToClose(timeout: 10)
        return termination
    }

    /// Sends SIGTERM, then SIGKILL after `grace` seconds; always reaps.
    ///
    /// - Returns: how it ended.
    @discardableResult
    func terminate(grace: Double = 3) async -> Termination? {
        guard isRunning else { return termination }
        send(SIGTERM)
        if await poll(timeout: grace, until: { !self.isRunning }) {
            await waitForStreamsToClose(timeout: 2)
            return termination
        }
        kill()
        return termination
    }

    /// Sends a signal.
    func send(_ signal: Int32) {
        guard isRunning else { return }
        _ = Glibc.kill(process.processIdentifier, signal)
    }

    /// SIGKILLs the child and waits (at most 5 s) until Foundation has reaped it. Synchronous, so
    /// it works in `defer`.
    func kill() {
        guard isRunning else { return }
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        let deadline = Date().addingTimeInterval(5)
        while isRunning && Date() < deadline { usleep(5_000) }
    }

    private func waitForStreamsToClose(timeout: Double) async {
        // Grandchildren (a coordinator's local workers) may hold the pipes a little longer.
        _ = await poll(timeout: timeout) { self.lock.withLock { self.openStreams == 0 } }
    }

    private func poll(timeout: Double, until condition: @escaping @Sendable () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while !condition() {
            if ContinuousClock.now >= deadline { return condition() }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }
}
