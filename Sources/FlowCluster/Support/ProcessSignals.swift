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

    /// Sends `signal` to this process once its parent dies, so local workers never outlive a
    /// coordinator that was killed (`flow-worker --exit-with-parent`).
    ///
    /// A thread waits in `poll(2)` on a pidfd of the parent, which turns readable when the parent
    /// exits: nothing runs meanwhile. The pidfd comes from glibc's `pidfd_open` or, with a glibc
    /// older than 2.36, from the system call itself (Linux 5.3 and later). Only on an older kernel,
    /// which has no pidfd, the kernel is asked instead (`PR_SET_PDEATHSIG`); it then also sends
    /// the signal when the parent's thread that started this process ends, which for a
    /// ``LocalWorkerPool`` can be before the coordinator does.
    public static func signalWhenParentExits(_ signal: Int32) {
        let parent = getppid()
        guard let descriptor = parentDescriptor(parent) else {
            #if os(Linux)
            if getppid() == parent { _ = setParentDeathSignal(signal) }
            #endif
            // Adopted already (the parent has gone): now.
            if getppid() != parent { kill(getpid(), signal) }
            return
        }
        Thread.detachNewThread {
            var item = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            while poll(&item, 1, -1) < 0 && errno == EINTR {}
            close(descriptor)
            kill(getpid(), signal)
        }
    }

    /// A pidfd of `parent` (`pidfd_open(2)`), or `nil` where there is none: no such call (a
    /// kernel before 5.3, or not Linux), or the parent is already gone (the call fails, or this
    /// process already has another parent).
    private static func parentDescriptor(_ parent: pid_t) -> Int32? {
        #if os(Linux)
        guard let descriptor = pidfdOpen(parent), descriptor >= 0 else { return nil }
        guard getppid() == parent else {
            close(descriptor)
            return nil
        }
        return descriptor
        #else
        return nil
        #endif
    }

    #if os(Linux)
    /// `pidfd_open(pid, 0)`: glibc's (2.36 and later), else the system call by number (434 on
    /// every architecture since Linux 5.3), both looked up at run time: Glibc's module exports
    /// neither, and `syscall` is variadic (called here with its two arguments as `long`s, which
    /// is how a variadic call passes them on x86-64 and AArch64). `nil` when neither can be made.
    private static func pidfdOpen(_ pid: pid_t) -> Int32? {
        let process = UnsafeMutableRawPointer(bitPattern: 0)
        if let symbol = dlsym(process, "pidfd_open") {
            typealias PidfdOpen = @convention(c) (pid_t, UInt32) -> Int32
            return unsafeBitCast(symbol, to: PidfdOpen.self)(pid, 0)
        }
        guard let symbol = dlsym(process, "syscall") else { return nil }
        typealias Syscall = @convention(c) (Int, Int, Int) -> Int
        let result = unsafeBitCast(symbol, to: Syscall.self)(434, Int(pid), 0)
        return result >= 0 ? Int32(result) : nil
    }

    /// `prctl(PR_SET_PDEATHSIG, signal)`, looked up at run time (`prctl` is variadic, so not
    /// exported to Swift; its arguments are `unsigned long`s, passed as a variadic call would).
    private static func setParentDeathSignal(_ signal: Int32) -> Bool {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "prctl") else { return false }
        typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
        // PR_SET_PDEATHSIG is 1.
        return unsafeBitCast(symbol, to: Prctl.self)(1, UInt(signal), 0, 0, 0) == 0
    }
    #endif
}
