import Foundation

/// Starts the servers tests need (nginx, the python servers) so that they can be stopped with
/// SIGTERM, and so that they end with the test process even when it is killed outright.
public enum ProcessLaunch {
    /// What ties a child to this process's life: Linux's parent-death signal, set by util-linux's
    /// `setpriv` just before it becomes the child's program.
    static let setpriv = "/usr/bin/setpriv"

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
    ///   so that thread stays until the child has exited.
    public static func run(_ process: Process, unblockingSignals: Bool = true) throws {
        if FileManager.default.isExecutableFile(atPath: setpriv), let executable = process.executableURL?.path {
            process.arguments = ["--pdeathsig", "TERM", "--", executable] + (process.arguments ?? [])
            process.executableURL = URL(fileURLWithPath: setpriv)
        }
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
            started.signal()
            // The child's parent, as the parent-death signal sees it: stays while the child runs.
            while didStart && process.isRunning { usleep(50_000) }
        }
        thread.start()
        started.wait()
        if let failure { throw failure }
    }
}
