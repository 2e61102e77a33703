import Foundation

/// Work an op starts that must outlive the op, but not the process: cleaning up after a failure
/// or a cancellation (aborting an S3 multipart upload so that no parts stay stored).
///
/// A cancelled op reports at once, so its cleanup cannot run inside it. It runs here instead,
/// uncancelled, and the Flow programs wait for it (up to a limit) before they exit:
///
/// ```swift
/// await FlowPendingWork.run { try? await store.abort(uploadID) }
/// ...
/// await FlowPendingWork.finish(within: .seconds(15))   // before exit
/// ```
public enum FlowPendingWork {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var running: [UUID: Task<Void, Never>] = [:]

    /// Runs `work` in a task of its own that the caller's cancellation does not reach, and waits
    /// for it.
    public static func run(_ work: @escaping @Sendable () async -> Void) async {
        let id = UUID()
        let task = Task.detached {
            await work()
            lock.withLock { _ = running.removeValue(forKey: id) }
        }
        lock.withLock {
            // Already finished (and removed itself) only if it ran before this line: then drop it.
            running[id] = task
        }
        await task.value
        lock.withLock { _ = running.removeValue(forKey: id) }
    }

    /// How many pieces of work are running now.
    public static var count: Int { lock.withLock { running.count } }

    /// Waits until every piece of work has finished, or `limit` has passed.
    ///
    /// - Returns: whether everything finished.
    @discardableResult
    public static func finish(within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let tasks = lock.withLock { Array(running.values) }
            if tasks.isEmpty { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return lock.withLock { running.isEmpty }
    }
}
