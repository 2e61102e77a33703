import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What this machine's kernel says about a process another Flow program recorded by its id: a
/// run's socket file (`flow-PID-….sock`), a journal's `pid`.
package enum LocalProcess {
    /// Whether process `pid` has ended: the kernel has no such process, or only its zombie (it
    /// exited, and its parent has not collected its status yet).
    ///
    /// A zombie counts as ended: a coordinator killed by its parent's test or shell stays one until
    /// that parent reaps it, which can take as long as the parent likes (Foundation's `Process`
    /// reaps only once a socket the child inherited closes). `kill(pid, 0)` alone called it alive,
    /// and kept its stale socket file and its journal "running".
    ///
    /// A process that exists but is not ours to signal (`EPERM`) has not ended.
    package static func hasEnded(_ pid: Int32) -> Bool {
        if kill(pid, 0) == -1 { return errno == ESRCH }
        return isZombie(pid)
    }

    /// Whether `/proc/PID/stat` gives the state `Z` (zombie) or `X` (dead): the third field,
    /// after the name in parentheses (which may itself hold spaces and parentheses).
    static func isZombie(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(after: close)...].drop { $0 == " " }.first
        return state == "Z" || state == "X"
    }
}
