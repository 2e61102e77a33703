import Foundation
import Synchronization

/// Where a ``FlowBatchExecutor`` puts the results of the tasks it was handed, from any thread, and
/// where the engine takes them in batches: one wake-up for however many arrived meanwhile.
package final class FlowResultInbox: Sendable {
    private static let ids = Atomic<UInt64>(0)

    /// This inbox's number, unique in the process: an executor can key its own state on it.
    public let id: UInt64
    /// With a ``FlowBatchExecutor/lookahead(for:maxConcurrent:)``: how many of this inbox's tasks
    /// may run at once (the group's `maxConcurrent`); `nil` when the engine hands over no more
    /// tasks than that anyway.
    public let concurrencyLimit: Int?

    // An adaptive FlowLocked, faster here than `Mutex`; its value is reached through a pointer,
    // with no exclusivity check (those, on these as a class's `var`s and on FlowTaskResult's
    // fields, were 270 instructions an element in the group's pulling drive, callgrind).
    private let state = FlowLocked.make(State())

    private struct State {
        var results: [FlowTaskResult] = []
        var waiting: CheckedContinuation<[FlowTaskResult], Never>?
        var closed = false
        /// Woken with nothing to take (``wake()``): the next ``next()`` returns at once.
        var woken = false
    }

    /// An empty inbox.
    ///
    /// - Parameter concurrencyLimit: how many of its tasks may run at once, when the engine hands
    ///   over more than that.
    public init(concurrencyLimit: Int? = nil) {
        id = Self.ids.wrappingAdd(1, ordering: .relaxed).newValue
        self.concurrencyLimit = concurrencyLimit
    }

    /// Hands over one task's result.
    public func deliver(_ result: FlowTaskResult) {
        let waiter: CheckedContinuation<[FlowTaskResult], Never>? = state.withLock { state in
            guard let waiter = state.waiting else {
                // Room for a burst at once, not grown by doubling (each doubling copied every
                // result so far).
                if state.results.capacity == 0 { state.results.reserveCapacity(32) }
                state.results.append(result)
                return nil
            }
            state.waiting = nil
            return waiter
        }
        waiter?.resume(returning: [result])
    }

    /// Makes the engine waiting in ``next()`` (or its next call) return, with no result: the
    /// group's feed changed (elements arrived, or the last one went out).
    func wake() {
        let waiter: CheckedContinuation<[FlowTaskResult], Never>? = state.withLock { state in
            guard let waiter = state.waiting else {
                state.woken = true
                return nil
            }
            state.waiting = nil
            return waiter
        }
        waiter?.resume(returning: [])
    }

    /// The results that arrived since the last call, waiting for at least one. Empty once the
    /// calling task is cancelled, or when woken (``wake()``).
    func next() async -> [FlowTaskResult] {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[FlowTaskResult], Never>) in
                let ready: [FlowTaskResult]? = state.withLock { state in
                    if !state.results.isEmpty {
                        state.woken = false
                        defer { state.results = [] }
                        return state.results
                    }
                    if state.closed || state.woken {
                        state.woken = false
                        return []
                    }
                    state.waiting = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter: CheckedContinuation<[FlowTaskResult], Never>? = state.withLock { state in
                state.closed = true
                defer { state.waiting = nil }
                return state.waiting
            }
            waiter?.resume(returning: [])
        }
    }
}

/// An executor that also takes many tasks in one call and answers through a ``FlowResultInbox``:
/// a group's elements then need no Swift task each, and a burst of them goes out together. The
/// engine uses it for groups whose elements are tried once (no `retry`) and that it says it can
/// take (``canSubmit(_:)``); everything else goes through ``FlowExecutor/execute(_:)``.
package protocol FlowBatchExecutor: FlowExecutor {
    /// Whether tasks like `task` (the same op, in the same step) can go through ``submit(_:into:)``.
    func canSubmit(_ task: FlowTask) -> Bool

    /// Starts the tasks; each one's result goes into `inbox` exactly once, whatever happens to it
    /// (a failure to send it is a failed result, a shutdown a cancelled one).
    func submit(_ tasks: [FlowTask], into inbox: FlowResultInbox)

    /// Gives up every task handed over with `inbox` that has no result yet: each ends as cancelled
    /// (its result still arrives in the inbox, or none does once the run is stopping).
    func cancelAll(in inbox: FlowResultInbox)

    /// How many tasks like `task`, beyond the group's `maxConcurrent`, the engine may hand over
    /// ahead of need, so that a finished task's place is taken without waiting for the engine.
    /// An executor that says more than 0 (the default) runs at most the inbox's
    /// ``FlowResultInbox/concurrencyLimit`` of its tasks at once, and starts none of them after
    /// one failed until the engine calls ``resume(_:)`` (the failure may end the group).
    func lookahead(for task: FlowTask, maxConcurrent: Int) -> Int

    /// The engine has judged a failed result of `inbox` and the group goes on: its tasks handed
    /// over ahead may start again.
    func resume(_ inbox: FlowResultInbox)
}

extension FlowBatchExecutor {
    /// None: the engine hands over no more than `maxConcurrent` tasks at a time.
    public func lookahead(for task: FlowTask, maxConcurrent: Int) -> Int { 0 }

    /// Nothing to do for an executor that takes no tasks ahead.
    public func resume(_ inbox: FlowResultInbox) {}
}
