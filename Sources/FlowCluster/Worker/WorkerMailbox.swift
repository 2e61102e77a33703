import FlowWire
import Synchronization

/// What the worker's tasks and its owner hand the I/O thread, behind one `Mutex`.
final class WorkerMailbox: Sendable {
    private struct State {
        var finished: [(run: UInt64, result: WireResult)] = []
        var drainRequested = false
        var exited = false
        var exitError: ClusterError?
        var exitWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Queues a finished task; returns whether the queue was empty (only then wake the thread).
    func post(run: UInt64, result: WireResult) -> Bool {
        state.withLock {
            let wasEmpty = $0.finished.isEmpty
            $0.finished.append((run, result))
            return wasEmpty
        }
    }

    func take() -> (finished: [(run: UInt64, result: WireResult)], drain: Bool) {
        state.withLock { state in
            defer { state.finished.removeAll(keepingCapacity: true) }
            return (state.finished, state.drainRequested)
        }
    }

    func requestDrain() { state.withLock { $0.drainRequested = true } }

    var exitError: ClusterError? { state.withLock { $0.exitError } }

    func exit(_ error: ClusterError?) {
        let waiters = state.withLock { state in
            state.exited = true
            state.exitError = error
            defer { state.exitWaiters = [] }
            return state.exitWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func waitForExit() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.exited { return true }
                state.exitWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}
