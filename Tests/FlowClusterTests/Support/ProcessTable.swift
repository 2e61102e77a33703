import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Looks at processes the test did not start itself (a coordinator's local workers) via /proc.
enum ProcessTable {
    /// The live (not zombie) processes whose parent is `parent`.
    static func children(of parent: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let (state, parentID) = stat(pid) else { return false }
            return parentID == parent && state != "Z"
        }
    }

    /// The live children of `parent` whose program is `name` (the last part of its path): a
    /// coordinator's local workers, not a short-lived process it runs beside them (a CI run of
    /// the ThreadSanitizer pass once found a third child there).
    static func children(of parent: Int32, named name: String) -> [Int32] {
        children(of: parent).filter { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            let program = String(decoding: data.prefix { $0 != 0 }, as: UTF8.self)
            return program.split(separator: "/").last.map(String.init) == name
        }
    }

    /// The live processes whose command line contains `text` (a test's temporary folder, which
    /// its programs' arguments name).
    static func mentioning(_ text: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard isAlive(pid), let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self).contains(text)
        }
    }

    /// Whether `pid` exists and is not a zombie.
    static func isAlive(_ pid: Int32) -> Bool {
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

    /// Polls until none of `pids` is alive; SIGKILLs the survivors after `timeout` seconds.
    ///
    /// - Returns: the pids that were still alive at the deadline.
    static func waitUntilGone(_ pids: [Int32], timeout: Double) async -> [Int32] {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while ContinuousClock.now < deadline {
            if !pids.contains(where: isAlive) { return [] }
            try? await Task.sleep(for: .milliseconds(20))
        }
        let survivors = pids.filter(isAlive)
        for pid in survivors { kill(pid, SIGKILL) }
        return survivors
    }
}
