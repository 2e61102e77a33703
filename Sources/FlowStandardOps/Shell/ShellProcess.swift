#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// One run of a program: collects its stdout and the tail of its stderr, enforces a time limit
/// (SIGTERM to its process group, SIGKILL 2 s later), and returns once the program has been
/// reaped.
///
/// Two traits of Foundation.Process on Linux shape this. It starts the child as the leader of
/// its own process group, so signals sent to the group reach everything the program started. And
/// it notices the exit only when every process holding an inherited descriptor has gone, so a
/// background process (`sh -c "server &"`) would keep the run open: the exit is therefore watched
/// with `waitid(WNOWAIT)` (which leaves the reaping to Foundation), and once the program has
/// exited and its output is read, whatever it left running in its group is killed.
final class ShellProcess: @unchecked Sendable {
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
    static let killGrace = 2.0
    /// How long reading goes on after the exit while the pipes stay quiet (held open only by
    /// something left in the background).
    static let quietAfterExit = 0.2
    /// How long to wait for Foundation's reaping after the group was killed, in case something
    /// left the group (`setsid`) and still holds a descriptor.
    static let reapWait = 2.0

    private let process = Process()
    private let outputPipe = Pipe()
    private let errorPipe = Pipe()
    private let timeLimit: Double

    private let lock = NSLock()
    /// The exit as `waitid` saw it, before Foundation reaps.
    private var observedExit: Termination?
    /// The exit as Foundation reported it, after reaping.
    private var reaped: Termination?
    private var readingDone = false
    private var reapWaitOver = false
    private var output = Data()
    private var errorTail = Data()
    private var timedOut = false
    private var stopping = false
    private var finished = false
    private var continuation: CheckedContinuation<Outcome, Never>?
    private var deadline: DispatchWorkItem?

    /// Prepares a run.
    ///
    /// - Parameters:
    ///   - executable: the program's absolute path.
    ///   - arguments: the arguments after argv[0].
    ///   - environment: the child's whole environment.
    ///   - workingDirectory: where it starts, or `nil` for the current directory.
    ///   - timeLimit: seconds before it is killed.
    init(executable: URL, arguments: [String], environment: [String: String], workingDirectory: URL?, timeLimit: Double) {
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        if let workingDirectory { process.currentDirectoryURL = workingDirectory }
        self.timeLimit = timeLimit
    }

    /// Starts the program and waits for it and its output. Cancelling the calling task kills it.
    ///
    /// - Throws: ``FlowStandardOpError/Code/launchFailed`` when it cannot be started.
    func run() async throws -> Outcome {
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        process.standardOutput = outputPipe
        process.standardError = errorPipe
        process.terminationHandler = { [self] child in
            let ended: Termination = child.terminationReason == .exit
                ? .exit(child.terminationStatus) : .signal(child.terminationStatus)
            lock.withLock { reaped = ended }
            completeIfDone()
        }
        do {
            try await ProcessLauncher.launch(process)
        } catch {
            throw FlowStandardOpError(.launchFailed, "cannot start \(process.executableURL?.path ?? "?"): \(error.localizedDescription)")
        }
        let reader = Thread { [self] in watch() }
        reader.name = "ShellProcess"
        reader.start()
        let deadline = DispatchWorkItem { [self] in stop(timedOut: true) }
        lock.withLock { self.deadline = deadline }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeLimit, execute: deadline)

        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                lock.withLock { self.continuation = continuation }
                completeIfDone()
            }
        } onCancel: {
            stop(timedOut: false)
        }
    }

    /// Ends the program: SIGTERM to its process group now, SIGKILL after the grace period if it
    /// has not exited.
    private func stop(timedOut: Bool) {
        let pid: Int32? = lock.withLock {
            guard !finished, !stopping else { return nil }
            stopping = true
            self.timedOut = timedOut
            return process.processIdentifier
        }
        guard let pid, pid > 0 else { return }
        signalGroup(pid, SIGTERM)
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.killGrace) { [self] in
            let exited = lock.withLock { finished || observedExit != nil || reaped != nil }
            if !exited { signalGroup(pid, SIGKILL) }
        }
    }

    /// Signals the program's process group; the group id stays valid while the program is
    /// unreaped, and it is not reaped before this run finishes.
    private func signalGroup(_ pid: Int32, _ signal: Int32) {
        if kill(-pid, signal) != 0 { kill(pid, signal) }
    }

    private func completeIfDone() {
        let resume: (CheckedContinuation<Outcome, Never>, Outcome)? = lock.withLock {
            guard !finished, readingDone, let continuation else { return nil }
            guard let termination = reaped ?? (reapWaitOver ? observedExit : nil) else { return nil }
            finished = true
            deadline?.cancel()
            self.continuation = nil
            return (continuation, Outcome(termination: termination, standardOutput: output, standardErrorTail: errorTail, timedOut: timedOut))
        }
        if let (continuation, outcome) = resume { continuation.resume(returning: outcome) }
    }

    /// Runs on its own thread: reads stdout and stderr, notices the exit, then clears the group.
    private func watch() {
        let pid = process.processIdentifier
        readPipes(pid: pid)
        // The program has exited and its output is read: anything still in its group was left
        // behind and would keep Foundation from reaping the program. Once Foundation has reaped
        // it the group id may be reused, so the group is only signalled before.
        if lock.withLock({ reaped == nil }) { signalGroup(pid, SIGKILL) }
        lock.withLock { readingDone = true }
        completeIfDone()
        let waitUntil = Date().addingTimeInterval(Self.reapWait)
        while Date() < waitUntil, lock.withLock({ reaped == nil }) { usleep(10_000) }
        lock.withLock { reapWaitOver = true }
        completeIfDone()
    }

    /// Reads both pipes until the program has exited and they have closed, or stayed quiet for
    /// a moment after the exit (something left in the background holds them).
    private func readPipes(pid: Int32) {
        let descriptors = [outputPipe.fileHandleForReading.fileDescriptor, errorPipe.fileHandleForReading.fileDescriptor]
        var open = [true, true]
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        var quietSince: Date?
        while true {
            var received = false
            if open.contains(true) {
                var polled = descriptors.indices.filter { open[$0] }.map { pollfd(fd: descriptors[$0], events: Int16(POLLIN), revents: 0) }
                if poll(&polled, nfds_t(polled.count), 50) > 0 {
                    for entry in polled where entry.revents != 0 {
                        let index = descriptors.firstIndex(of: entry.fd)!
                        let count = read(entry.fd, buffer.baseAddress, buffer.count)
                        if count > 0 {
                            received = true
                            append(UnsafeRawBufferPointer(rebasing: buffer[0..<count]), toErrors: index == 1)
                        } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                            open[index] = false
                        }
                    }
                }
            } else {
                usleep(10_000)
            }
            guard noteExit(pid: pid) else { continue }
            if !open.contains(true) { return }
            if received {
                quietSince = nil
                continue
            }
            let since = quietSince ?? Date()
            quietSince = since
            if Date().timeIntervalSince(since) >= Self.quietAfterExit { return }
        }
    }

    /// Whether the program has exited, recording how; `waitid` with `WNOWAIT` leaves it unreaped.
    private func noteExit(pid: Int32) -> Bool {
        if lock.withLock({ observedExit != nil || reaped != nil }) { return true }
        var info = siginfo_t()
        let result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
        if result != 0 {
            // ECHILD: Foundation has reaped it already and reports through the handler.
            return errno == ECHILD
        }
        guard info._sifields._sigchld.si_pid == pid else { return false }
        let status = info._sifields._sigchld.si_status
        let ended: Termination = info.si_code == CLD_EXITED ? .exit(status) : .signal(status)
        lock.withLock { observedExit = ended }
        return true
    }

    private func append(_ bytes: UnsafeRawBufferPointer, toErrors: Bool) {
        lock.withLock {
            if toErrors {
                errorTail.append(contentsOf: bytes)
                if errorTail.count > Self.errorTailLimit { errorTail = Data(errorTail.suffix(Self.errorTailLimit)) }
            } else {
                output.append(contentsOf: bytes)
            }
        }
    }
}
