#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The flow core's mutex: on Linux an adaptive pthread mutex, which spins briefly before it
/// sleeps, so two threads that take it in turn for a few instructions each (a group's feed and
/// result inbox, handed between the engine and the tasks running elements) do not go through the
/// kernel every time. With `NSLock`, a plain mutex, futex calls were about a sixth of an
/// in-process group's time at maxConcurrent 64 (perf). ThreadSanitizer sees it, as any pthread mutex.
///
/// The mutex lives in the object's own allocation (a `ManagedBuffer`, as NIO's locks do): one
/// allocation per lock where `NSLock` makes two, and every op has one.
/// Not `Sendable` itself (`ManagedBuffer` is not): it is held by a `let` in the types it guards.
final class FlowLock: ManagedBuffer<Void, pthread_mutex_t> {
    /// A new, unlocked lock.
    static func make() -> FlowLock {
        let lock = unsafeDowncast(create(minimumCapacity: 1) { _ in () }, to: FlowLock.self)
        lock.withUnsafeMutablePointerToElements(initializeAdaptiveMutex)
        return lock
    }

    deinit {
        _ = withUnsafeMutablePointerToElements { pthread_mutex_destroy($0) }
    }

    /// Runs `body` holding the lock.
    @inline(__always)
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        withUnsafeMutablePointerToElements { _ = pthread_mutex_lock($0) }
        defer { withUnsafeMutablePointerToElements { _ = pthread_mutex_unlock($0) } }
        return try body()
    }
}

/// Makes `mutex` an adaptive one on Linux (spins briefly before sleeping), a default one elsewhere:
/// the mutex of ``FlowLock`` and of ``FlowLocked``.
func initializeAdaptiveMutex(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
    var attributes = pthread_mutexattr_t()
    pthread_mutexattr_init(&attributes)
    #if os(Linux)
    pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
    #endif
    pthread_mutex_init(mutex, &attributes)
    pthread_mutexattr_destroy(&attributes)
}
