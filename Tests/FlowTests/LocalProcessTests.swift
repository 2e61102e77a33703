@testable import Flow
import Foundation
import Testing

/// ``LocalProcess/hasEnded(_:)``: what decides whether a recorded run's socket file is stale and
/// whether a journal's run is still running.
@Suite struct LocalProcessTests {
    @Test func thisProcessHasNotEnded() {
        #expect(!LocalProcess.hasEnded(getpid()))
        #expect(!LocalProcess.isZombie(getpid()))
    }

    @Test func aProcessIdNoProcessHasHasEnded() {
        // Above /proc/sys/kernel/pid_max's largest value (2^22).
        #expect(LocalProcess.hasEnded(4_194_305))
    }

    /// A child that exited and is not reaped yet is a zombie: `kill(pid, 0)` still succeeds for
    /// it, and it has ended. Once reaped, it has ended too.
    @Test func anExitedChildNotYetReapedHasEnded() throws {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { argv.forEach { free($0) } }
        try #require(posix_spawn(&pid, "/bin/true", nil, nil, argv, environ) == 0)
        // Waits for the exit without reaping it.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1 {
            try #require(errno == EINTR, "waitid: \(String(cString: strerror(errno)))")
        }
        #expect(kill(pid, 0) == 0, "a zombie still answers kill(pid, 0)")
        #expect(LocalProcess.isZombie(pid))
        #expect(LocalProcess.hasEnded(pid))
        var status: Int32 = 0
        #expect(waitpid(pid, &status, 0) == pid)
        #expect(LocalProcess.hasEnded(pid))
    }

    @Test func aRunningChildHasNotEnded() throws {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sleep"), strdup("30"), nil]
        defer { argv.forEach { free($0) } }
        try #require(posix_spawn(&pid, "/bin/sleep", nil, nil, argv, environ) == 0)
        defer {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
        #expect(!LocalProcess.hasEnded(pid))
    }
}
