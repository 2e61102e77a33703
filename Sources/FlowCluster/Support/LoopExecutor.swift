import Foundation
import Synchronization
import ZeroMQ

/// A `TaskExecutor` whose jobs run on an I/O loop's own thread, between its polls.
///
/// A Swift task that prefers it (`Task(executorPreference:)`) runs on the thread that serves the
/// socket: a result it posts is sent in the same turn of the loop, and a result the loop hands it
/// resumes it in that turn, with no hand-over to another thread and back. On this 2-core VM each
/// hand-over is a wake-up of a sleeping thread, 20 to 50 µs, and a serial step made four of them.
///
/// The loop starts each turn with ``startTurn()``, which says whether to poll its socket first,
/// and then calls ``runPending()``. A job enqueued from another thread wakes the loop through its
/// `ZMQWakeup`. Before the loop starts (``attach()``) and once it has ended (``close()``), jobs go
/// to the global concurrent executor, so no task that prefers this one is left waiting.
final class LoopExecutor: TaskExecutor, Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        /// The loop's thread from ``attach()`` to ``close()``; `nil` while no loop runs jobs.
        var loopThread: pthread_t?
    }

    private let state = Mutex(State())
    private let wakeup: ZMQWakeup
    /// The loop thread's alone: relaxed loads and stores, plain moves on x86 and arm64.
    private let turnsWithoutPoll = Atomic<Int>(0)

    /// How many turns in a row a loop may run jobs without polling its socket: jobs that keep
    /// enqueueing others (a task that yields in a loop) cannot starve the socket.
    static let maxTurnsWithoutPoll = 3

    init(wakeup: ZMQWakeup) {
        self.wakeup = wakeup
    }

    /// Makes the calling thread the loop's, from now on running the jobs: jobs enqueued on it
    /// need no wake-up. Before, jobs go to the global concurrent executor (a run on a
    /// coordinator that was never started ends, as it did before this executor).
    func attach() {
        state.withLock { $0.loopThread = pthread_self() }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let (serving, wakes) = state.withLock { state -> (Bool, Bool) in
            guard let loop = state.loopThread else { return (false, false) }
            state.jobs.append(job)
            return (true, state.jobs.count == 1 && pthread_equal(loop, pthread_self()) == 0)
        }
        if !serving {
            globalConcurrentExecutor.enqueue(job)
        } else if wakes {
            wakeup.signal()
        }
    }

    /// Wakes the loop for work just handed to it (a command, a finished task), unless the caller
    /// runs on the loop: it looks before it polls again.
    func wake() {
        let onLoop = state.withLock { state in state.loopThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
        if !onLoop { wakeup.signal() }
    }

    /// Whether the loop's turn polls its socket first, and whether that poll may wait. Jobs that
    /// are waiting run at once, without a poll, for up to ``maxTurnsWithoutPoll`` turns in a row;
    /// then the loop polls without waiting. On the loop's thread only.
    func startTurn() -> (polls: Bool, mayWait: Bool) {
        let pending = state.withLock { !$0.jobs.isEmpty }
        let turns = turnsWithoutPoll.load(ordering: .relaxed)
        if pending, turns < Self.maxTurnsWithoutPoll {
            turnsWithoutPoll.store(turns + 1, ordering: .relaxed)
            return (false, false)
        }
        turnsWithoutPoll.store(0, ordering: .relaxed)
        return (true, !pending)
    }

    /// Runs the jobs waiting now (not the ones they enqueue); on the loop's thread only.
    func runPending() {
        let jobs = state.withLock { state in
            defer { state.jobs.removeAll(keepingCapacity: true) }
            return state.jobs
        }
        for job in jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
    }

    /// Ends the loop's part: jobs waiting and jobs enqueued from now on run on the global
    /// concurrent executor.
    func close() {
        let jobs = state.withLock { state in
            state.loopThread = nil
            defer { state.jobs = [] }
            return state.jobs
        }
        for job in jobs { globalConcurrentExecutor.enqueue(job) }
    }
}
