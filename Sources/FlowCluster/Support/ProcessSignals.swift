import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Process-wide signal set-up for the Flow programs.
package enum ProcessSignals {
    /// Unblocks every signal. A child started from a thread that blocks SIGTERM/SIGINT (Swift
    /// Testing's workers do) inherits that mask and would ignore `kill`; servers call this first.
    public static func clearInheritedMask() {
        var empty = sigset_t()
        sigemptyset(&empty)
        pthread_sigmask(SIG_SETMASK, &empty, nil)
    }

    /// Calls `action` once when this process's parent dies, so local workers never outlive a
    /// coordinator that was killed.
    ///
    /// A thread waits in `poll(2)` on a pidfd of the parent (Linux 5.3 and later), which turns
    /// readable when the parent exits. Where there is none (an older kernel, or not Linux) it
    /// looks at the parent process id twice a second instead.
    public static func whenParentExits(_ action: @escaping @Sendable () -> Void) {
        let parent = getppid()
        Thread.detachNewThread {
            if let descriptor = parentDescriptor(parent) {
                var item = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                while poll(&item, 1, -1) < 0 && errno == EINTR {}
                close(descriptor)
            } else {
                while getppid() == parent { usleep(500_000) }
            }
            action()
        }
    }

    /// A pidfd of `parent` (`pidfd_open(2)`, looked up at run time: Glibc's module does not
    /// export it), or `nil` where there is none. Opened after the parent is gone, the call fails
    /// or the process already has another parent; either way the caller does not wait.
    private static func parentDescriptor(_ parent: pid_t) -> Int32? {
        #if os(Linux)
        typealias PidfdOpen = @convention(c) (pid_t, UInt32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pidfd_open") else { return nil }
        let descriptor = unsafeBitCast(symbol, to: PidfdOpen.self)(parent, 0)
        guard descriptor >= 0 else { return nil }
        // Opened after the parent exited and this process was adopted: nothing to wait for, but
        // the fallback's loop would end at once too.
        guard getppid() == parent else {
            close(descriptor)
            return nil
        }
        return descriptor
        #else
        return nil
        #endif
    }
}
