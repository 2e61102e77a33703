import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Starts the servers tests need (nginx, the python servers) so that they can be stopped with
/// SIGTERM, and so that they end with the test process even when it is killed outright.
public enum ProcessLaunch {
    /// What ties a child to this process's life: Linux's parent-death signal, set by util-linux's
    /// `setpriv` just before it becomes the child's program.
    static let setpriv = "/usr/bin/setpriv"

    /// How a child ended, as the kernel told the thread that started it.
    public struct Exit: Sendable, Equatable, CustomStringConvertible {
        /// The exit status, or the signal number when `signalled`.
        public var status: Int32
        /// Whether a signal ended it.
        public var signalled: Bool

        public init(status: Int32, signalled: Bool) {
            self.status = status
            self.signalled = signalled
        }

        public var description: String { signalled ? "killed by signal \(status)" : "exit \(status)" }
    }

    /// Calls `process.run()` on a fresh thread, and returns once it started.
    ///
    /// - With `unblockingSignals` (the default), the thread blocks no signal. A child inherits
    ///   its spawning thread's signal mask; the threads tests run on (Swift concurrency, Dispatch)
    ///   block nearly every signal, and nginx in single-process mode never unblocks them, so it
    ///   would ignore SIGTERM. Without it, the child gets the calling thread's mask, as
    ///   `process.run()` there would give it.
    /// - The child gets SIGTERM when the test process dies, however it dies: a test run that is
    ///   killed (SIGKILL, a CI time-out) runs no `deinit`, and its nginx used to live on. The
    ///   parent-death signal fires when the *thread* that spawned the child ends, not the process,
    ///   so that thread stays until the child has exited: blocked in `waitid` (without reaping,
    ///   which stays Foundation's), it is also what sees the exit.
    ///
    /// - Returns: the child's exit, fired when it has ended (waits on it have their deadlines).
    @discardableResult
    public static func run(_ process: Process, unblockingSignals: Bool = true) throws -> OneTimeEvent<Exit> {
        if FileManager.default.isExecutableFile(atPath: setpriv), let executable = process.executableURL?.path {
            process.arguments = ["--pdeathsig", "TERM", "--", executable] + (process.arguments ?? [])
            process.executableURL = URL(fileURLWithPath: setpriv)
        }
        let exit = OneTimeEvent<Exit>()
        let key = ObjectIdentifier(process)
        running.withLock { $0[key] = (process, exit) }
        let started = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failure: (any Error)?
        let thread = Thread {
            if unblockingSignals {
                var nothingBlocked = sigset_t()
                sigemptyset(&nothingBlocked)
                pthread_sigmask(SIG_SETMASK, &nothingBlocked, nil)
            }
            do { try process.run() } catch { failure = error }
            let didStart = failure == nil
            let pid = process.processIdentifier
            started.signal()
            // The child's parent, as the parent-death signal sees it: stays while the child runs.
            if didStart { exit.fire(waitForEnd(of: process, pid: pid)) }
            running.withLock { _ = $0.removeValue(forKey: key) }
        }
        thread.name = "child-\(process.executableURL?.lastPathComponent ?? "process")"
        thread.start()
        started.wait()
        if let failure { throw failure }
        return exit
    }

    /// The children started here that have not ended, with their exits.
    private static let running = Mutex<[ObjectIdentifier: (process: Process, exit: OneTimeEvent<Exit>)]>([:])

    /// The exit of `process`, started by ``run(_:unblockingSignals:)``; `nil` once it has ended
    /// (or when it was not started here).
    public static func exit(of process: Process) -> OneTimeEvent<Exit>? {
        running.withLock { $0[ObjectIdentifier(process)]?.exit }
    }

    /// Blocks until child `pid` has ended, leaving it for Foundation to reap.
    private static func waitForEnd(of process: Process, pid: pid_t) -> Exit {
        var info = siginfo_t()
        while true {
            if waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == 0 {
                let status = info._sifields._sigchld.si_status
                return Exit(status: status, signalled: info.si_code != CLD_EXITED)
            }
            if errno != EINTR { break }
        }
        // ECHILD: Foundation reaped it first, so it has its status (or is storing it right now).
        process.waitUntilExit()
        return Exit(status: process.terminationStatus, signalled: process.terminationReason == .uncaughtSignal)
    }

    /// Ends a child started by ``run(_:unblockingSignals:)``: SIGTERM, then SIGKILL when it has
    /// not exited within `grace` seconds; returns once the kernel says it has exited.
    ///
    /// Nothing here waits for Foundation to reap it (`waitUntilExit`): Foundation learns of a
    /// child's end when a socket the child inherited closes, and a child another thread spawned at
    /// the same moment can inherit that socket too (Foundation's spawn closes the descriptors it
    /// found open a moment before, and the socket has no close-on-exec). Its end is then heard only
    /// when that other child ends, a moto server's or a pool's whole test later, while
    /// `waitUntilExit` spins on a run loop with no source (a main test phase here hung on it, a
    /// core busy, once the helpers ran off the cooperative pool and more children started at once).
    /// Foundation reaps the zombie in its own time.
    ///
    /// - Returns: whether it ended on SIGTERM within `grace` (`false`: it needed SIGKILL).
    @discardableResult
    public static func terminate(_ process: Process, exit: OneTimeEvent<Exit>, grace: Duration = .seconds(3)) -> Bool {
        guard !exit.hasHappened else { return true }
        Glibc.kill(process.processIdentifier, SIGTERM)
        let ended = exit.waitBlocking(timeout: grace) != nil
        if !ended { Glibc.kill(process.processIdentifier, SIGKILL) }
        reap(process, exit: exit)
        return ended
    }

    /// SIGKILLs a child started by ``run(_:unblockingSignals:)`` unless it has ended, and returns
    /// once it has exited.
    public static func kill(_ process: Process) {
        guard let exit = exit(of: process) else { return }
        kill(process, exit: exit)
    }

    /// SIGKILLs a child started by ``run(_:unblockingSignals:)`` and returns once it has exited.
    public static func kill(_ process: Process, exit: OneTimeEvent<Exit>) {
        if !exit.hasHappened { Glibc.kill(process.processIdentifier, SIGKILL) }
        reap(process, exit: exit)
    }

    /// After SIGKILL, which cannot be ignored: waits for the exit the kernel reports (see
    /// ``terminate(_:exit:grace:)`` for why not for Foundation's reaping). A child still there
    /// after 60 s fails the test that stopped it (an issue naming it) and is left, rather than
    /// hanging the test.
    private static func reap(_ process: Process, exit: OneTimeEvent<Exit>) {
        guard exit.waitBlocking(timeout: .seconds(60)) == nil else { return }
        let name = process.executableURL?.lastPathComponent ?? "a child"
        Issue.record("ProcessLaunch: \(name) (pid \(process.processIdentifier)) did not exit within 60 s of SIGKILL")
    }
}

/// A child's pipe (stdout or stderr) read on a thread of its own to its end: what came is kept
/// (the last `keeping` bytes), and a caller can wait for a line.
public final class PipeReader: Sendable {
    private struct State {
        var text = Data()
        var ended = false
    }

    private let state = Mutex(State())
    private let waiters = EventWaiters()

    /// Starts reading `pipe`, which ends once every writer closed it (Foundation closes this
    /// process's writing end when it starts the child).
    ///
    /// - Parameter also: told of each change as well, for a wait on several things at once.
    public init(_ pipe: Pipe, keeping limit: Int = 1 << 16, notifying also: EventWaiters? = nil) {
        let handle = pipe.fileHandleForReading
        let thread = Thread { [self] in
            let descriptor = handle.fileDescriptor
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                state.withLock { state in
                    state.text.append(contentsOf: buffer[0..<count])
                    if state.text.count > limit { state.text.removeFirst(state.text.count - limit) }
                }
                waiters.changed()
                also?.changed()
            }
            try? handle.close()
            state.withLock { $0.ended = true }
            waiters.changed()
            also?.changed()
        }
        thread.name = "pipe-reader"
        thread.start()
    }

    /// What came so far (the last bytes kept).
    public var text: String { state.withLock { String(decoding: $0.text, as: UTF8.self) } }

    /// Whether the pipe has ended (every writer closed it).
    public var ended: Bool { state.withLock { $0.ended } }

    /// Blocks until a whole line containing `marker` came, the pipe ended, or `timeout` passed.
    ///
    /// - Returns: whether the line came.
    public func waitBlocking(forLineContaining marker: String, timeout: Duration) -> Bool {
        _ = waiters.waitBlocking(timeout: timeout) { hasLine(containing: marker) || ended }
        return hasLine(containing: marker)
    }

    /// Blocks until a whole first line came, the pipe ended, or `timeout` passed.
    ///
    /// - Returns: the first line (without its newline), `nil` when none came.
    public func waitBlocking(forFirstLineWithin timeout: Duration) -> String? {
        _ = waiters.waitBlocking(timeout: timeout) { text.contains("\n") || ended }
        guard let end = text.firstIndex(of: "\n") else { return nil }
        return String(text[..<end])
    }

    /// Blocks until the pipe ended or `timeout` passed; whether it ended.
    public func waitBlocking(forEndWithin timeout: Duration) -> Bool {
        waiters.waitBlocking(timeout: timeout) { ended }
    }

    /// Whether a whole line containing `marker` came.
    public func hasLine(containing marker: String) -> Bool {
        text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().contains { $0.contains(marker) }
    }
}
