import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Process-wide signal set-up for the Flow programs.
public enum ProcessSignals {
    /// Unblocks every signal. A child started from a thread that blocks SIGTERM/SIGINT (Swift
    /// Testing's workers do) inherits that mask and would ignore `kill`; servers call this first.
    public static func clearInheritedMask() {
        var empty = sigset_t()
        sigemptyset(&empty)
        pthread_sigmask(SIG_SETMASK, &empty, nil)
    }

    /// Calls `action` once when this process's parent dies (polling the parent process id twice a
    /// second), so local workers never outlive a coordinator that was killed.
    public static func whenParentExits(_ action: @escaping @Sendable () -> Void) {
        let parent = getppid()
        Thread.detachNewThread {
            while getppid() == parent { usleep(500_000) }
            action()
        }
    }
}
