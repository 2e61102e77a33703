import Foundation

/// Work an op starts that must outlive the op, but not the process: cleaning up after a failure
/// or a cancellation (aborting an S3 multipart upload so that no parts stay stored).
///
/// A cancelled op reports at once, so its cleanup cannot run inside it. It runs here instead,
/// uncancelled, and the Flow programs wait for it (up to a limit) before they exit. Work that may
/// need a cleanup holds the process from the start (``hold()``), so that a process told to stop
/// while the op is still unwinding its cancellation does not exit before the cleanup begins:
///
/// ```swift
/// let hold = FlowPendingWork.hold()
/// defer { FlowPendingWork.release(hold) }
/// do { try await upload() } catch { await FlowPendingWork.run { await abort() }; throw error }
/// ...
/// await FlowPendingWork.finish(within: .seconds(15))   // before exit
/// ```
public enum FlowPendingWork {
    /// What ``hold()`` returns, for ``release(_:)``.
    public struct Hold: Sendable, Hashable {
        fileprivate let id: UUID
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var holds: Set<UUID> = []

    /// Keeps the process from finishing (within ``finish(within:)``'s limit) until ``release(_:)``.
    public static func hold() -> Hold {
        let hold = Hold(id: UUID())
        _ = lock.withLock { holds.insert(hold.id) }
        return hold
    }

    /// Lets the process finish, as far as this hold goes.
    public static func release(_ hold: Hold) {
        _ = lock.withLock { holds.remove(hold.id) }
    }

    /// Runs `work` in a task of its own that the caller's cancellation does not reach, holding the
    /// process until it ends, and returns what it returns.
    public static func run<Result: Sendable>(_ work: @escaping @Sendable () async -> Result) async -> Result {
        let hold = hold()
        return await Task.detached {
            defer { release(hold) }
            return await work()
        }.value
    }

    /// How many holds and cleanups are pending now.
    public static var count: Int { lock.withLock { holds.count } }

    /// Waits until nothing is pending, or `limit` has passed.
    ///
    /// - Returns: whether everything finished.
    @discardableResult
    public static func finish(within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if count == 0 { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return count == 0
    }
}
