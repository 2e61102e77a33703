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
/// The loop calls ``runPending()`` each turn and polls without waiting while ``hasPending``. A job
/// enqueued from another thread wakes the loop through its `ZMQWakeup`. Before the loop starts
/// (``attach()``) and once it has ended (``close()``), jobs go to the global concurrent executor,
/// so no task that prefers this one is left waiting.
final class LoopExecutor: TaskExecutor, @unchecked Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        /// Whether the loop runs jobs: from ``attach()`` to ``close()``.
        var serving = false
    }

    private let state = Mutex(State())
    private let wakeup: ZMQWakeup
    /// The loop's thread, set by ``attach()``; compared with `pthread_self()`.
    private let loopThread = Mutex<pthread_t?>(nil)

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
        loopThread.withLock { $0 = pthread_self() }
        state.withLock { $0.serving = true }
    }

    /// Whether the caller runs on the loop's thread.
    var isLoopThread: Bool {
        loopThread.withLock { thread in thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let (serving, first) = state.withLock { state -> (Bool, Bool) in
            guard state.serving else { return (false, false) }
            state.jobs.append(job)
            return (true, state.jobs.count == 1)
        }
        if !serving {
            globalConcurrentExecutor.enqueue(job)
        } else if first, !isLoopThread {
            wakeup.signal()
        }
    }

    /// Whether jobs are waiting: the loop then polls without waiting.
    var hasPending: Bool {
        state.withLock { !$0.jobs.isEmpty }
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
            state.serving = false
            defer { state.jobs = [] }
            return state.jobs
        }
        for job in jobs { globalConcurrentExecutor.enqueue(job) }
    }
}
