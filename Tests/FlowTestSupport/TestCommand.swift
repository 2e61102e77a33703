import Foundation

/// Runs a command-line tool to completion, for checks made with standard tools (`sha256sum`).
public enum TestCommand {
    /// What the tool did.
    public struct Result: Sendable {
        /// Its exit status.
        public let status: Int32
        /// Its standard output.
        public let output: String
    }

    /// Runs `arguments[0]` (looked up through `/usr/bin/env`) and waits for it to exit and its
    /// output to end, on a thread of its own (``offThread(_:)``): the caller's task is suspended,
    /// and no thread of the cooperative pool is held while the child runs.
    ///
    /// - Throws: when it cannot be started, or has not ended within `timeout` (it is killed then;
    ///   the message has its output so far).
    public static func run(_ arguments: [String], timeout: Duration = .seconds(600)) async throws -> Result {
        try await offThread { try runBlocking(arguments, timeout: timeout) }
    }

    /// As ``run(_:timeout:)``, blocking the calling thread until the child has ended: for code
    /// that already runs on a thread of its own (a server's start inside ``offThread(_:)``),
    /// never for an `async` caller.
    ///
    /// - Throws: when it cannot be started, or has not ended within `timeout` (it is killed then;
    ///   the message has its output so far).
    public static func runBlocking(_ arguments: [String], timeout: Duration = .seconds(600)) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let exit = try ProcessLaunch.run(process)
        let changes = EventWaiters()
        let reader = PipeReader(output, keeping: Int.max, notifying: changes)
        exit.whenHappened { _ in changes.changed() }
        guard changes.waitBlocking(timeout: timeout, until: { exit.hasHappened && reader.ended }) else {
            ProcessLaunch.kill(process, exit: exit)
            throw TestSupportError("\(arguments.joined(separator: " ")) did not end within \(timeout)"
                + " (\(exit.hasHappened ? "it exited; something it started held its stdout" : "killed")); its output so far: \(reader.text)")
        }
        // The kernel's word, not Foundation's (see ProcessLaunch.terminate): the status, or the signal.
        let ended = exit.current!
        return Result(status: ended.status, output: reader.text)
    }

    /// The SHA-256 of a file by `sha256sum`, as lowercase hex.
    public static func sha256sum(_ path: String) async throws -> String {
        let result = try await run(["sha256sum", path])
        guard result.status == 0, let digest = result.output.split(separator: " ").first else {
            throw TestSupportError("sha256sum \(path) failed with status \(result.status)")
        }
        return String(digest)
    }

    /// What a program run by ``runMeasured(_:_:memoryCap:timeLimit:)`` did, and its peak memory.
    public struct MeasuredResult: Sendable {
        /// Its exit status; `nil` when a signal ended it.
        public let status: Int32?
        /// Its standard output.
        public let output: String
        /// Its standard error.
        public let errors: String
        /// Its highest resident set size, in bytes, as the kernel accounts it at its end.
        public let peakResidentBytes: Int
        /// Whether it was killed for passing `memoryCap` or `timeLimit`.
        public let killed: Bool
    }

    /// Runs `work`, which blocks (a child waited for), on a thread of its own, and resumes the
    /// caller when it returns: a test's blocking wait never holds one of the cooperative pool's
    /// threads, which are two on a 2-core machine (a measured run of a minute there stalled every
    /// other test of the process).
    public static func offThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Swift.Result { try work() }) }
            thread.name = "test-off-thread"
            thread.start()
        }
    }

    /// ``runMeasured(_:_:memoryCap:timeLimit:)`` on a thread of its own (``offThread(_:)``).
    public static func measured(_ executable: String, _ arguments: [String], memoryCap: Int = 2 << 30,
                                timeLimit: Double = 120) async throws -> MeasuredResult {
        try await offThread { try runMeasured(executable, arguments, memoryCap: memoryCap, timeLimit: timeLimit) }
    }

    /// Runs `executable` to its end and measures its peak memory (`ru_maxrss` from `wait4`, exact
    /// where sampling `/proc` could miss a short peak).
    ///
    /// It is killed when its resident size passes `memoryCap` or it outlasts `timeLimit`, so that a
    /// program gone wrong does not take the machine's memory with it.
    ///
    /// - Throws: when it cannot be started.
    public static func runMeasured(_ executable: String, _ arguments: [String], memoryCap: Int = 2 << 30,
                                   timeLimit: Double = 120) throws -> MeasuredResult {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("measured-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let outputPath = folder.appendingPathComponent("stdout").path
        let errorPath = folder.appendingPathComponent("stderr").path

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // The test's threads block most signals, which a child would inherit.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var nothingBlocked = sigset_t()
        sigemptyset(&nothingBlocked)
        posix_spawnattr_setsigmask(&attributes, &nothingBlocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))

        // posix_spawn execs from this process's memory: Linux carries its high-water mark into the
        // child's ru_maxrss. A ru_maxrss at or under it is this process's, not the child's; then the
        // child's own VmHWM, sampled while it runs, is its peak.
        let ownPeak = ProcessMemory.peakResidentBytes() ?? 0
        var sampledPeak = 0
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard spawned == 0 else { throw TestSupportError("cannot start \(executable): \(String(cString: strerror(spawned)))") }

        // Its end is waited for (and it is reaped, with its rusage) on a thread of its own; meanwhile
        // its memory is sampled every 10 ms, which is the measurement, not a wait.
        nonisolated(unsafe) var status: Int32 = 0
        nonisolated(unsafe) var usage = rusage()
        let ended = DispatchSemaphore(value: 0)
        let child = pid
        let reaper = Thread {
            while wait4(child, &status, 0, &usage) == -1, errno == EINTR {}
            ended.signal()
        }
        reaper.name = "measured-reaper"
        reaper.start()
        var killed = false
        let deadline = Date().addingTimeInterval(timeLimit)
        while ended.wait(timeout: .now() + .milliseconds(10)) == .timedOut {
            sampledPeak = max(sampledPeak, statusBytes(of: pid, "VmHWM:") ?? 0)
            if !killed, (residentBytes(of: pid) ?? 0) > memoryCap || Date() > deadline {
                kill(pid, SIGKILL)
                killed = true
            }
        }
        let exited = status & 0x7f == 0
        return MeasuredResult(
            status: exited ? (status >> 8) & 0xff : nil,
            output: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "",
            errors: (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "",
            peakResidentBytes: usage.ru_maxrss * 1024 > ownPeak + (1 << 20) ? usage.ru_maxrss * 1024 : sampledPeak,
            killed: killed)
    }

    /// A field of `/proc/PID/status` given in kB (`VmHWM:`), in bytes.
    private static func statusBytes(of pid: pid_t, _ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(field) {
            return line.dropFirst(field.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }.map { $0 * 1024 }
        }
        return nil
    }

    /// A running process's resident size (`VmRSS` of `/proc/PID/status`), in bytes.
    private static func residentBytes(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return line.dropFirst(6).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }.map { $0 * 1024 }
        }
        return nil
    }
}
