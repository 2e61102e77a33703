import FlowTestSupport
import Foundation
import Testing

/// A program a test started: its output collected as it comes, and waits that always end.
///
/// Every wait has a time-out; a wait that times out records an issue and SIGKILLs the child
/// instead of hanging the test. A wait is woken by what it waits for (output read, a stream's
/// end, the child's exit as the thread that started it sees it), not by a polling timer.
/// Children started from Swift Testing's threads inherit a mask that blocks SIGTERM, so
/// ``terminate(grace:)`` follows SIGTERM with SIGKILL.
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
    /// Its exit, as the thread that started it saw it.
    private var exit: OneTimeEvent<ProcessLaunch.Exit>?
    /// Told of every change the waits look at: output, a stream's end, the exit.
    private let changes = EventWaiters()

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
        // Tied to the test process: a killed test run leaves no worker or coordinator behind
        // (a standing worker would wait for its next coordinator for good). The signal mask
        // stays this thread's, as before.
        let exit = try ProcessLaunch.run(process, unblockingSignals: false)
        lock.withLock { self.exit = exit }
        exit.whenHappened { [changes] _ in changes.changed() }
        collect(outPipe.fileHandleForReading, intoStdout: true)
        collect(errPipe.fileHandleForReading, intoStdout: false)
    }

    /// Reads `handle` to its end on a thread of its own (blocking reads, no Dispatch source: a
    /// readability handler's source is cancelled asynchronously, and its descriptor was closed
    /// under it once a wait woke at the end of the stream), then closes it.
    private func collect(_ handle: FileHandle, intoStdout: Bool) {
        let thread = Thread { [weak self] in
            defer { try? handle.close() }
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(handle.fileDescriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard let self else { return }
                guard count > 0 else {
                    lock.withLock { openStreams -= 1 }
                    changes.changed()
                    return
                }
                lock.withLock {
                    if intoStdout { stdoutData.append(contentsOf: buffer[0..<count]) } else { stderrData.append(contentsOf: buffer[0..<count]) }
                }
                changes.changed()
            }
        }
        thread.name = "\(label)-\(intoStdout ? "stdout" : "stderr")"
        thread.start()
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
        if let exited = lock.withLock({ exit?.current }) { return Termination(status: exited.status, signalled: exited.signalled) }
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
        let found = await waitUntil(timeout: timeout) { self.stderr.contains(text) || !self.isRunning }
        if stderr.contains(text) { return true }
        if found { await waitForStreamsToClose(timeout: 1) }
        if stderr.contains(text) { return true }
        Issue.record("\(label): no '\(text)' on stderr within \(timeout) s (\(isRunning ? "still running" : "exited"))\n\(transcript)",
                     sourceLocation: sourceLocation)
        return false
    }

    /// Waits until stdout or stderr satisfies `condition`, without recording an issue.
    func waitForOutput(timeout: Double, until condition: @escaping @Sendable (_ stdout: String, _ stderr: String) -> Bool) async -> Bool {
        await waitUntil(timeout: timeout) { condition(self.stdout, self.stderr) }
    }

    /// Waits for the child to exit and for its output to be read to the end.
    ///
    /// - Returns: how it ended, or `nil` after recording an issue and SIGKILLing it when it did
    ///   not exit within `timeout` seconds.
    @discardableResult
    func waitForExit(timeout: Double, sourceLocation: SourceLocation = #_sourceLocation) async -> Termination? {
        let exited = await waitUntil(timeout: timeout) { !self.isRunning }
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
        if await waitUntil(timeout: grace, until: { !self.isRunning }) {
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

    /// SIGKILLs the child and waits (at most 5 s) for its exit. Synchronous, so it works in
    /// `defer`.
    func kill() {
        guard isRunning else { return }
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        _ = changes.waitBlocking(timeout: .seconds(5)) { !isRunning }
    }

    /// Blocks until the child has exited, at most `timeout` seconds; whether it did. For a test's
    /// own thread (``onOwnThread(_:)``), never for an `async` caller.
    func waitForExitBlocking(timeout: Duration) -> Bool {
        changes.waitBlocking(timeout: timeout) { !isRunning }
    }

    /// Waits until stdout and stderr have both ended: every writer closed them, the child and
    /// whatever it started that shares them (a coordinator's local workers).
    ///
    /// - Returns: whether they did within `timeout` seconds.
    func waitForStreamsToEnd(timeout: Double) async -> Bool {
        await waitUntil(timeout: timeout) { self.lock.withLock { self.openStreams == 0 } }
    }

    private func waitForStreamsToClose(timeout: Double) async {
        // Grandchildren (a coordinator's local workers) may hold the pipes a little longer.
        _ = await waitUntil(timeout: timeout) { self.lock.withLock { self.openStreams == 0 } }
    }

    /// Waits until `condition` holds, re-checked at each change (output, a stream's end, the exit).
    private func waitUntil(timeout: Double, until condition: @escaping @Sendable () -> Bool) async -> Bool {
        await changes.wait(timeout: .milliseconds(Int64(timeout * 1000)), until: condition)
    }
}
