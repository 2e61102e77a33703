#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex for the engine's state that threads hand back and forth many times a millisecond (a
/// group's feed and result inbox): on Linux an adaptive pthread mutex, which spins briefly
/// before it sleeps, so two threads that take it in turn for a few instructions each do not
/// go through the kernel every time (with `NSLock`, a plain mutex, a quarter of an in-process
/// group's time at maxConcurrent 64 was futex calls). ThreadSanitizer sees it, as any pthread
/// mutex.
final class FlowLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        #if os(Linux)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        #endif
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` holding the lock.
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
