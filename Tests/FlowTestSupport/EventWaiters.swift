import Dispatch
import Foundation
import Synchronization

/// Waits for a condition that other code makes true and announces with ``changed()``: a line a
/// child wrote, a child's exit, a message a thread received. A wait is woken by the event, never
/// by a polling timer, and ends at its deadline whatever happens.
///
/// ```swift
/// let waiters = EventWaiters()
/// // where the state changes (outside any lock the condition takes):
/// waiters.changed()
/// // in a test:
/// #expect(await waiters.wait(timeout: .seconds(10)) { state.count >= 3 }, "...")
/// ```
///
/// The async wait parks no thread: it suspends on a continuation that ``changed()``, the deadline
/// (a Dispatch timer) or the task's cancellation resumes. The blocking wait is for code on a
/// thread of its own or in a synchronous helper.
public final class EventWaiters: Sendable {
    private struct Waiter {
        let condition: @Sendable () -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var next = 0
        var waiters: [Int: Waiter] = [:]
    }

    private let state = Mutex(State())
    /// For ``waitBlocking(timeout:until:)``.
    private let signal = NSCondition()

    public init() {}

    /// Re-checks every waiting condition; call it after each change a condition reads, outside
    /// any lock a condition takes.
    public func changed() {
        signal.lock()
        signal.broadcast()
        signal.unlock()
        let waiting = state.withLock { $0.waiters.map { ($0.key, $0.value.condition) } }
        for (id, condition) in waiting where condition() {
            resume(id, with: true)
        }
    }

    /// Waits until `condition` holds, re-checked at each ``changed()``.
    ///
    /// - Returns: `true` once it holds; `false` when `timeout` passed (or the task was cancelled)
    ///   first. The caller says what did not happen.
    public func wait(timeout: Duration, until condition: @escaping @Sendable () -> Bool) async -> Bool {
        if condition() { return true }
        let id = state.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                state.withLock { $0.waiters[id] = Waiter(condition: condition, continuation: continuation) }
                // A change between the first check and the registration has no waiter to wake.
                if condition() {
                    resume(id, with: true)
                    return
                }
                DispatchQueue.global().asyncAfter(deadline: .now() + Self.seconds(timeout)) { [self] in
                    if isWaiting(id) { resume(id, with: condition()) }
                }
                if Task.isCancelled { resume(id, with: condition()) }
            }
        } onCancel: {
            if isWaiting(id) { resume(id, with: condition()) }
        }
    }

    /// As ``wait(timeout:until:)``, blocking the calling thread: for a thread of its own or a
    /// synchronous helper, never for an `async` caller.
    public func waitBlocking(timeout: Duration, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(Self.seconds(timeout))
        signal.lock()
        defer { signal.unlock() }
        while !condition() {
            if !signal.wait(until: deadline) { return condition() }
        }
        return true
    }

    private func isWaiting(_ id: Int) -> Bool {
        state.withLock { $0.waiters[id] != nil }
    }

    private func resume(_ id: Int, with value: Bool) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.continuation.resume(returning: value)
    }

    /// A duration in seconds, for Dispatch and Foundation.
    public static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// Something that happens once (a child's exit, a server's readiness), with what it carried.
public final class OneTimeEvent<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)
    private let waiters = EventWaiters()
    private let actions = Mutex<[@Sendable (Value) -> Void]>([])

    public init() {}

    /// Records that it happened; later calls are ignored.
    public func fire(_ newValue: Value) {
        let first = value.withLock { current in
            guard current == nil else { return false }
            current = newValue
            return true
        }
        guard first else { return }
        waiters.changed()
        for action in actions.withLock({ actions in defer { actions = [] }; return actions }) { action(newValue) }
    }

    /// What it carried, `nil` until it happened.
    public var current: Value? { value.withLock { $0 } }

    /// Whether it happened.
    public var hasHappened: Bool { current != nil }

    /// Runs `action` when it happens (at once, on this thread, if it has).
    public func whenHappened(_ action: @escaping @Sendable (Value) -> Void) {
        let now: Value? = value.withLock { current in
            if current == nil { actions.withLock { $0.append(action) } }
            return current
        }
        if let now { action(now) }
    }

    /// Waits for it; `nil` when `timeout` passed first.
    public func wait(timeout: Duration) async -> Value? {
        _ = await waiters.wait(timeout: timeout) { self.hasHappened }
        return current
    }

    /// As ``wait(timeout:)``, blocking the calling thread.
    public func waitBlocking(timeout: Duration) -> Value? {
        _ = waiters.waitBlocking(timeout: timeout) { hasHappened }
        return current
    }
}
