import Foundation
import Synchronization

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
package enum FlowPendingWork {
    /// What ``hold()`` returns, for ``release(_:)``.
    public struct Hold: Sendable, Hashable {
        fileprivate let id: UUID
    }

    /// The process's holds.
    static let shared = FlowPendingWorkSet()

    /// Keeps the process from finishing (within ``finish(within:)``'s limit) until ``release(_:)``.
    public static func hold() -> Hold { shared.hold() }

    /// Lets the process finish, as far as this hold goes.
    public static func release(_ hold: Hold) { shared.release(hold) }

    /// Runs `work` in a task of its own that the caller's cancellation does not reach, holding the
    /// process until it ends, and returns what it returns.
    public static func run<Result: Sendable>(_ work: @escaping @Sendable () async -> Result) async -> Result {
        await shared.run(work)
    }

    /// How many holds and cleanups are pending now.
    public static var count: Int { shared.count }

    /// Waits until nothing is pending, or `limit` has passed.
    ///
    /// - Returns: whether everything finished.
    @discardableResult
    public static func finish(within limit: Duration) async -> Bool {
        await shared.finish(within: limit) == .released
    }
}

/// A set of holds and the callers waiting for it to empty: ``FlowPendingWork`` is the process's
/// one; a test makes its own, apart from the holds other tests' uploads take.
final class FlowPendingWorkSet: Sendable {
    /// How a ``finish(within:)`` ended.
    enum Finish: Equatable {
        /// The last hold was released (or none was held).
        case released
        /// The limit passed with holds left.
        case timedOut
        /// The waiting task was cancelled.
        case cancelled
    }

    private struct State {
        var holds: Set<UUID> = []
        /// Callers of ``finish(within:)`` waiting for the holds to go, by id.
        var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    func hold() -> FlowPendingWork.Hold {
        let hold = FlowPendingWork.Hold(id: UUID())
        _ = state.withLock { $0.holds.insert(hold.id) }
        return hold
    }

    func release(_ hold: FlowPendingWork.Hold) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.holds.remove(hold.id)
            guard state.holds.isEmpty else { return [] }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    func run<Result: Sendable>(_ work: @escaping @Sendable () async -> Result) async -> Result {
        let hold = hold()
        return await Task.detached {
            defer { self.release(hold) }
            return await work()
        }.value
    }

    var count: Int { state.withLock { $0.holds.count } }

    /// How many callers wait in ``finish(within:)`` now: a test waits for its finisher to be waiting.
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Waits until nothing is held, `limit` has passed, or the calling task is cancelled, and says which.
    func finish(within limit: Duration) async -> Finish {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.allReleased() }
            group.addTask { try? await Task.sleep(for: limit) }
            await group.next()
            group.cancelAll()
        }
        if count == 0 { return .released }
        return Task.isCancelled ? .cancelled : .timedOut
    }

    /// Returns once nothing is held, or when the calling task is cancelled.
    private func allReleased() async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Registered under the lock that release and the cancellation handler take: a
                // release or a cancellation is seen here, or finds the waiter.
                let now = state.withLock { state -> Bool in
                    if state.holds.isEmpty || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
