#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value and the adaptive pthread mutex that guards it, in one allocation: what ``FlowLock``
/// is to a class's `var`s, for a `let` in a `Sendable` final class (`let state: FlowLocked<State>`).
/// A struct around the one allocation, so it adds no pointer to follow.
///
/// Not `Mutex`: the group's feed and result inbox, taken in turn by the engine and the tasks that
/// run elements all the time, were faster with this adaptive mutex (see ``FlowLock``), and
/// ThreadSanitizer sees a pthread mutex but not `Mutex`'s futex. Not `Mutex` either where the
/// value holds what the seed's API hands in without `Sendable` (`[String: Any]` buckets, its
/// callbacks): `Mutex` takes only `sending` values. The value is reached only through
/// ``withLock(_:)``, with no dynamic exclusivity check (a pointer, not a class property).
// `@unchecked`: the value is reached only under the mutex (withLock); it holds the seed's `Any` values and callbacks.
struct FlowLocked<Value>: @unchecked Sendable {
    private let storage: Storage

    /// A new lock around `value`.
    static func make(_ value: Value) -> FlowLocked<Value> {
        FlowLocked(storage: Storage.make(value))
    }

    /// Runs `body` on the value, holding the lock.
    @inline(__always)
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        try storage.withUnsafeMutablePointers { value, mutex in
            _ = pthread_mutex_lock(mutex)
            defer { _ = pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }

    /// The value (the header) and the mutex (the one element) in one allocation.
    private final class Storage: ManagedBuffer<Value, pthread_mutex_t> {
        static func make(_ value: Value) -> Storage {
            let storage = unsafeDowncast(create(minimumCapacity: 1) { _ in value }, to: Storage.self)
            storage.withUnsafeMutablePointerToElements(initializeAdaptiveMutex)
            return storage
        }

        deinit {
            // The value, the header, is destroyed by ManagedBuffer itself (as NIO's lock storage relies on).
            _ = withUnsafeMutablePointerToElements { pthread_mutex_destroy($0) }
        }
    }
}
