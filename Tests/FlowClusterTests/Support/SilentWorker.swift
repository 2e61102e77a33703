import Dispatch
import FlowTestSupport
import FlowWire
import Foundation
import Synchronization

/// A worker that takes tasks and never answers them, but heartbeats all along: alive to the
/// coordinator's liveness check, silent on its work (a hung op runner with a healthy socket). A
/// ``RawWorker`` served on a thread of its own, which records when each task came and, when told,
/// answers them all late. The test calls ``stop()`` (the thread holds it until then).
final class SilentWorker: Sendable {
    private struct State {
        var arrivals: [(task: WireTask, at: ContinuousClock.Instant)] = []
        var answerLate = false
        var stopping = false
        var failure: String?
    }

    private let state = Mutex(State())
    private let done = DispatchSemaphore(value: 0)
    /// Told of each task that came.
    private let changes = EventWaiters()
    /// Wakes its thread's wait for a message when the test changes what it is to do.
    private let worker: RawWorker

    /// Connects, says READY (no queue, no features) and starts heartbeating every
    /// `heartbeatMilliseconds`, the interval it announces.
    init(endpoint: String, name: String, slots: UInt32, ops: [String], heartbeatMilliseconds: UInt32 = 200) throws {
        let worker = try RawWorker(endpoint: endpoint, name: name, slots: slots, ops: ops, heartbeatMilliseconds: heartbeatMilliseconds)
        self.worker = worker
        let interval = Duration.milliseconds(Int64(heartbeatMilliseconds))
        let thread = Thread { [self] in
            defer {
                worker.close()
                done.signal()
            }
            do {
                try serve(worker, heartbeat: interval)
            } catch {
                state.withLock { $0.failure = "\(error)" }
            }
        }
        thread.name = "silent-worker"
        thread.start()
    }

    private func serve(_ worker: RawWorker, heartbeat: Duration) throws {
        var nextBeat = ContinuousClock.now
        var answered = false
        while !state.withLock({ $0.stopping }) {
            if ContinuousClock.now >= nextBeat {
                try worker.send(.heartbeat)
                nextBeat = ContinuousClock.now + heartbeat
            }
            // Until the next heartbeat is due, a task comes, or the test says what to do (wake()).
            let untilBeat = ContinuousClock.now.duration(to: nextBeat)
            if case .task(let tasks)? = try worker.nextBlocking(timeout: max(0.001, EventWaiters.seconds(untilBeat))) {
                let now = ContinuousClock.now
                state.withLock { $0.arrivals += tasks.map { ($0, now) } }
                changes.changed()
            }
            let (late, tasks) = state.withLock { ($0.answerLate, $0.arrivals.map(\.task)) }
            if late, !answered, !tasks.isEmpty {
                answered = true
                try worker.send(.result(tasks.map { RawWorker.result(for: $0, output: .string("late")) }))
            }
        }
    }

    /// The tasks it was given, with when each came.
    var arrivals: [(task: WireTask, at: ContinuousClock.Instant)] { state.withLock { $0.arrivals } }

    /// What stopped it serving (a failed send), if anything did.
    var failure: String? { state.withLock { $0.failure } }

    /// Waits until it holds at least `count` tasks; whether it did within `timeout` seconds.
    func waitForTasks(_ count: Int, timeout: Double) async -> Bool {
        await changes.wait(timeout: .milliseconds(Int64(timeout * 1000))) { self.arrivals.count >= count }
    }

    /// Answers every task it was given, at once, with success and the output `"late"`.
    func answerLate() {
        state.withLock { $0.answerLate = true }
        worker.wake()
    }

    /// Stops serving and closes the socket (waits at most 5 s for its thread).
    func stop() {
        let wasStopping = state.withLock { state in
            defer { state.stopping = true }
            return state.stopping
        }
        worker.wake()
        if !wasStopping { _ = done.wait(timeout: .now() + 5) }
    }
}
