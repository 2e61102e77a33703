import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Looks at processes the test did not start itself (a coordinator's local workers) via /proc.
public enum ProcessTable {
    /// The live (not zombie) processes whose parent is `parent`.
    public static func children(of parent: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let (state, parentID) = stat(pid) else { return false }
            return parentID == parent && state != "Z"
        }
    }

    /// The live children of `parent` whose program is `name` (the last part of its path): a
    /// coordinator's local workers, not a short-lived process it runs beside them (a CI run of
    /// the ThreadSanitizer pass once found a third child there).
    public static func children(of parent: Int32, named name: String) -> [Int32] {
        children(of: parent).filter { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            let program = String(decoding: data.prefix { $0 != 0 }, as: UTF8.self)
            return program.split(separator: "/").last.map(String.init) == name
        }
    }

    /// The live processes whose command line contains `text` (a test's temporary folder, which
    /// its programs' arguments name).
    public static func mentioning(_ text: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard isAlive(pid), let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self).contains(text)
        }
    }

    /// The last part of the path of `pid`'s program (`sleep`, not the shell that started it),
    /// `nil` once it is gone.
    public static func program(of pid: Int32) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
        return String(decoding: data.prefix { $0 != 0 }, as: UTF8.self).split(separator: "/").last.map(String.init)
    }

    /// Whether `pid` exists and is not a zombie.
    public static func isAlive(_ pid: Int32) -> Bool {
        guard let (state, _) = stat(pid) else { return false }
        return state != "Z" && state != "X"
    }

    /// State letter and parent pid from /proc/PID/stat (the command may contain spaces and
    /// parentheses, so parse after the last ')').
    private static func stat(_ pid: Int32) -> (Character, Int32)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 2, let state = fields[0].first, let parent = Int32(fields[1]) else { return nil }
        return (state, parent)
    }

    /// Waits until none of `pids` is alive, woken by their exits (a pidfd of each, which becomes
    /// readable when the process ends, whoever its parent is); SIGKILLs the survivors after
    /// `timeout` seconds.
    ///
    /// - Returns: the pids that were still alive at the deadline.
    public static func waitUntilGone(_ pids: [Int32], timeout: Double) async -> [Int32] {
        let notSeenToExit = await withCheckedContinuation { (continuation: CheckedContinuation<[Int32], Never>) in
            let thread = Thread { continuation.resume(returning: waitForExits(of: pids, timeout: timeout)) }
            thread.name = "wait-until-gone"
            thread.start()
        }
        let survivors = notSeenToExit.filter(isAlive)
        for pid in survivors { kill(pid, SIGKILL) }
        return survivors
    }

    /// `pidfd_open(2)` from the C library (glibc 2.36 declares it in a header Swift does not see).
    private typealias PidfdOpen = @convention(c) (pid_t, UInt32) -> Int32
    private static let pidfdOpen: PidfdOpen? = {
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "pidfd_open") else { return nil }
        return unsafeBitCast(symbol, to: PidfdOpen.self)
    }()

    /// Blocks in `poll` on a pidfd of each of `pids` until each has exited or `timeout` seconds
    /// passed. A pid already gone counts as exited.
    ///
    /// - Returns: the pids not seen to exit.
    private static func waitForExits(of pids: [Int32], timeout: Double) -> [Int32] {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        var watched: [(pid: Int32, descriptor: Int32)] = []
        defer { for entry in watched { close(entry.descriptor) } }
        for pid in pids {
            let descriptor = pidfdOpen?(pid, 0) ?? -1
            if descriptor >= 0 {
                watched.append((pid, descriptor))
            } else if pidfdOpen == nil || errno != ESRCH {
                // No pidfd (a kernel before 5.3): nothing to wake on, so the deadline decides.
                return fallbackWait(pids, until: deadline)
            }
        }
        var waiting = watched
        while !waiting.isEmpty {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { break }
            var descriptors = waiting.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
            let milliseconds = Int32(min(Double(Int32.max), EventWaiters.seconds(remaining) * 1000 + 1))
            if poll(&descriptors, nfds_t(descriptors.count), milliseconds) < 0, errno != EINTR { break }
            waiting = zip(waiting, descriptors).filter { $0.1.revents == 0 }.map(\.0)
        }
        return waiting.map(\.pid)
    }

    /// Where there is no pidfd to wait on (not on the kernels these tests run on): looks every
    /// 20 ms until `deadline`.
    private static func fallbackWait(_ pids: [Int32], until deadline: ContinuousClock.Instant) -> [Int32] {
        while ContinuousClock.now < deadline, pids.contains(where: isAlive) { usleep(20_000) }
        return pids.filter(isAlive)
    }
}
