#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Starts a `Foundation.Process` from a fresh thread whose signal mask is empty.
///
/// A child inherits the signal mask of the thread that spawns it, and Dispatch and Swift
/// concurrency threads block nearly every signal. Spawned from one of them, a program would
/// ignore the SIGTERM of a time limit (and SIGINT, SIGPIPE…) for its whole life; Foundation.Process
/// offers no way to reset the mask, so the spawning thread's own mask is cleared instead.
enum ProcessLauncher {
    /// Calls `process.run()` on a new thread with no blocked signals.
    ///
    /// - Throws: what `run()` throws.
    static func launch(_ process: Process) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let thread = Thread {
                var nothingBlocked = sigset_t()
                sigemptyset(&nothingBlocked)
                pthread_sigmask(SIG_SETMASK, &nothingBlocked, nil)
                continuation.resume(with: Result { try process.run() })
            }
            thread.name = "ProcessLauncher"
            thread.start()
        }
    }
}
