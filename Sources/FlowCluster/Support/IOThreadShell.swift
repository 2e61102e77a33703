import Foundation
import Synchronization
import ZeroMQ

/// The start and the end of the one thread that owns a coordinator's or a pool's sockets: what
/// ``FlowCoordinator`` and ``FlowPool`` share around their own I/O loops.
///
/// It holds the ZeroMQ context, the wake-up async callers signal, and the ZAP handler of a CURVE
/// server. ``start(name:endpoint:zap:_:)`` starts the thread, which starts the ZAP handler
/// (before anything is bound: it must answer the first handshake), then runs `body`: `body` sets
/// its socket up, calls `ready` with the outcome, and on success serves until its loop sees the
/// owner's stop. When `body` returns, the thread itself closes the wake-up and the context (which
/// ends the ZAP handler's thread: its receive fails with `ETERM`), then resumes everyone waiting
/// in ``waitForEnd()``. Nothing here blocks a caller: set-up and end are both awaited through
/// continuations the thread resumes.
final class IOThreadShell: Sendable {
    let context: ZMQContext
    let wakeup: ZMQWakeup

    private enum Phase {
        /// Not started: a stop closes everything at once.
        case idle
        /// The thread runs (setting up or serving).
        case running
        /// The thread has ended, or was never started and is stopped: everything is closed.
        case ended
    }

    private struct State {
        var phase = Phase.idle
        var stopRequested = false
        var zap: ZAPHandler?
        var endWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Creates the context and the wake-up.
    ///
    /// - Throws: ``ZMQError`` when either cannot be made.
    init() throws {
        context = try ZMQContext()
        wakeup = try ZMQWakeup()
    }

    /// The ZAP handler, once the thread has started it.
    var zap: ZAPHandler? { state.withLock { $0.zap } }

    /// Starts the thread and waits, suspended, until `body` has set its socket up.
    ///
    /// - Parameters:
    ///   - name: the thread's name, as `top -H` shows it.
    ///   - endpoint: the endpoint, for the error when the ZAP handler cannot start.
    ///   - zap: makes the ZAP handler in the context, on the thread, before `body` runs; `nil`
    ///     for a plaintext server.
    ///   - body: sets up, calls `ready`, and serves until stopped; runs on the new thread.
    /// - Returns: the bound endpoint `body` gave `ready`.
    /// - Throws: what `body` gave `ready`, ``ClusterError/cannotBind(endpoint:reason:)`` when the
    ///   ZAP handler cannot start, ``ClusterError/notRunning`` when already started or stopped.
    ///   When it throws, the thread has ended and everything is closed.
    func start(name: String, endpoint: String, zap: (@Sendable (ZMQContext) throws -> ZAPHandler)?,
               _ body: @escaping @Sendable (_ ready: @escaping @Sendable (Result<String, ClusterError>) -> Void) -> Void)
        async throws(ClusterError) -> String {
        let admitted = state.withLock { state in
            guard state.phase == .idle, !state.stopRequested else { return false }
            state.phase = .running
            return true
        }
        guard admitted else { throw .notRunning }
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<String, ClusterError>, Never>) in
            let pending = ResumeOnce(continuation)
            let failure = FailureNote()
            let thread = Thread { [self] in
                ThreadName.set(name)
                var zapStarted = true
                if let zap {
                    do {
                        let handler = try zap(context)
                        state.withLock { $0.zap = handler }
                    } catch {
                        failure.set(.cannotBind(endpoint: endpoint, reason: "cannot start the ZAP handler: \(error)"))
                        zapStarted = false
                    }
                }
                if zapStarted {
                    body { result in
                        switch result {
                        case .success: pending.resume(returning: result)
                        // Said once the thread has closed everything: the caller may retry at once.
                        case .failure(let error): failure.set(error)
                        }
                    }
                }
                end()
                // A set-up that failed, or a body that ended without saying how its set-up went.
                pending.resume(returning: .failure(failure.error ?? .notRunning))
            }
            thread.name = name
            thread.start()
        }
        return try outcome.get()
    }

    /// Asks the thread to end and returns at once: the owner has already told its loop (its
    /// mailbox closed, its stop flag set), and this wakes the loop to see it. Never started,
    /// everything is closed here and now. Safe to call more than once, from any thread.
    func requestStop() {
        let neverStarted = state.withLock { state in
            state.stopRequested = true
            guard state.phase == .idle else { return false }
            state.phase = .ended
            return true
        }
        if neverStarted {
            wakeup.close()
            context.close()
        } else {
            wakeup.signal()
        }
    }

    /// Returns once the thread has ended and closed the context (at once when it has, or was
    /// never started and is stopped). Call ``requestStop()`` first, or it waits for the loop to
    /// end by itself.
    func waitForEnd() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = state.withLock { state in
                guard state.phase != .ended else { return true }
                state.endWaiters.append(continuation)
                return false
            }
            if ended { continuation.resume() }
        }
    }

    /// On the thread, once `body` has returned: closes the wake-up and the context, then wakes
    /// the waiters.
    private func end() {
        wakeup.close()
        // Waits for the ZAP handler's socket, which its thread closes as its receive fails with
        // ETERM: every other socket of the context was the body's, closed as it returned.
        context.close()
        let waiters = state.withLock { state in
            state.phase = .ended
            defer { state.endWaiters = [] }
            return state.endWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// A continuation resumed at most once, by whichever of several threads comes first.
package final class ResumeOnce<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>

    package init(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation = Mutex(continuation)
    }

    /// Resumes the continuation unless it was; returns whether this call did.
    @discardableResult
    package func resume(returning value: Value) -> Bool {
        guard let taken = continuation.withLock({ $0.take() }) else { return false }
        taken.resume(returning: value)
        return true
    }
}

/// Why a start failed, noted by the thread for when it has closed everything.
private final class FailureNote: Sendable {
    private let stored = Mutex<ClusterError?>(nil)
    var error: ClusterError? { stored.withLock { $0 } }
    func set(_ error: ClusterError) { stored.withLock { $0 = error } }
}
