import Foundation

/// Starts child processes so that they can be stopped with SIGTERM.
enum ProcessLaunch {
    /// Calls `process.run()` on a fresh thread with no blocked signals, and waits for it.
    ///
    /// A child inherits its spawning thread's signal mask; the threads tests run on (Swift
    /// concurrency, Dispatch) block nearly every signal, and nginx in single-process mode never
    /// unblocks them, so it would ignore SIGTERM.
    static func run(_ process: Process) throws {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failure: (any Error)?
        let thread = Thread {
            var nothingBlocked = sigset_t()
            sigemptyset(&nothingBlocked)
            pthread_sigmask(SIG_SETMASK, &nothingBlocked, nil)
            do { try process.run() } catch { failure = error }
            done.signal()
        }
        thread.start()
        done.wait()
        if let failure { throw failure }
    }
}
