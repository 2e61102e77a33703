import Foundation

/// An op written with async/await: override ``run()``; returning is success, throwing is failure.
///
/// ```swift
/// final class FetchOp: FlowAsyncOperation, @unchecked Sendable {
///     override func run() async throws {
///         let url: String = try value("url")
///         set("body", try await fetch(url))
///     }
/// }
/// ```
///
/// A missing or mistyped ``value(_:as:)`` read throws ``FlowDataError`` and finishes the op with
/// the seed's `withInsufficientInputData` / `withMismatchInputDataType` state. Cancelling the flow
/// cancels the task running ``run()``.
// `@unchecked` restated, as Swift 6 asks of FlowOperation's subclasses: `runningTask` is under the op's lock.
open class FlowAsyncOperation: FlowOperation, @unchecked Sendable {
    private var runningTask: Task<Void, Never>?

    /// Creates the op.
    public override init() {}

    /// The op's logic: override it.
    open func run() async throws {}

    /// Reads a bucket value.
    ///
    /// - Throws: ``FlowDataError`` when the key is missing or holds another type.
    @inlinable
    public func value<T>(_ key: String, as type: T.Type = T.self) throws -> T {
        // Inlinable for the same reason as `getData`: the cast is made for the caller's `T`.
        let stored = storedValue(key)
        if let stored, let typed = stored as? T { return typed }
        throw FlowDataError.read(key: key, found: stored, expected: T.self)
    }

    /// Reads a bucket value that may be absent.
    ///
    /// - Throws: ``FlowDataError`` when the key holds another type.
    @inlinable
    public func optionalValue<T>(_ key: String, as type: T.Type = T.self) throws -> T? {
        guard let stored = storedValue(key) else { return nil }
        if let typed = stored as? T { return typed }
        throw FlowDataError.read(key: key, found: stored, expected: T.self)
    }

    /// Writes a bucket value (same as ``FlowOperation/setData(name:value:)``).
    public func set(_ key: String, _ value: Any) {
        setData(name: key, value: value)
    }

    /// Whether ``run()`` may run on the I/O thread of the worker (or coordinator) that runs the
    /// op: say `true` only when it awaits and never holds its thread, with no blocking call
    /// (synchronous file or network I/O, a lock, `Thread.sleep`) and no long computation
    /// (hashing a big file). The op then starts and ends without a hand-over to another thread
    /// and back, two wake-ups of a sleeping thread that made a third of a serial step's round trip
    /// (0.1 of 0.35 ms on a 2-core VM). An op that held the thread would hold up every other
    /// task's result there and the worker's heartbeats; past the coordinator's liveness (3 s by
    /// default) the worker counts as lost.
    ///
    /// `false` by default: ``run()`` runs on Swift's global concurrent executor. In process, with no
    /// I/O thread, both are the same.
    open var mayRunOnIOThread: Bool { false }

    /// `true`: ``mainLogic()`` only starts the task that runs ``run()``.
    open override var runsMainLogicInline: Bool { true }

    /// Starts a task that runs ``run()`` and finishes the op by how it ended. The runner that
    /// flows and workers use does not come here: it awaits `runToFinish()` in its own task.
    public final override func mainLogic() {
        startWithAsynchronous()
        let task = Task { await self.runToFinish() }
        lock.withLock { runningTask = task }
        if isCancelled { task.cancel() }
    }

    /// Runs ``run()`` in the calling task and finishes the op by how it ended: returning is
    /// success, a ``FlowDataError`` the seed's data states, any other error `withError`.
    nonisolated(nonsending) func runToFinish() async {
        do {
            try await run()
            finishSuccessfully()
        } catch let error as FlowDataError {
            finish(error)
        } catch {
            finishWithError(error: error)
        }
    }

    open override func didCancel() {
        let task = lock.withLock { runningTask }
        task?.cancel()
        super.didCancel()
    }
}
