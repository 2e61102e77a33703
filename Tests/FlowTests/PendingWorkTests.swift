import Testing
@testable import Flow

/// ``FlowPendingWork/finish(within:)`` is woken by the last release, not by polling, and gives up
/// at its limit. Each test has a set of holds of its own (``FlowPendingWorkSet``), apart from the
/// process's, which other suites' uploads take.
@Suite struct PendingWorkTests {
    /// Returns once `work` has a caller waiting in `finish`.
    static func waitUntilWaiting(_ work: FlowPendingWorkSet) async {
        while work.waiting == 0 { await Task.yield() }
    }

    /// A lost wake-up leaves `finish` waiting for its 600 s limit, past the test's time limit: the
    /// test then fails, as it does if `finish` says anything but `released`.
    @Test(.timeLimit(.minutes(1))) func finishReturnsWhenTheLastHoldIsReleased() async {
        let work = FlowPendingWorkSet()
        let first = work.hold()
        let second = work.hold()
        let finished = Task { await work.finish(within: .seconds(600)) }
        await Self.waitUntilWaiting(work)
        work.release(first)
        #expect(work.waiting == 1, "a release with a hold left woke the finisher")
        work.release(second)
        #expect(await finished.value == .released)
        #expect(work.count == 0 && work.waiting == 0)
    }

    @Test func finishGivesUpAtItsLimitWhileSomethingIsHeld() async {
        let work = FlowPendingWorkSet()
        let hold = work.hold()
        #expect(await work.finish(within: .milliseconds(50)) == .timedOut)
        #expect(work.waiting == 0, "the timed-out finisher left its waiter behind")
        work.release(hold)
        #expect(await work.finish(within: .seconds(600)) == .released, "nothing held: finish returns at once")
    }

    @Test(.timeLimit(.minutes(1))) func aCancelledFinishReturns() async {
        let work = FlowPendingWorkSet()
        let hold = work.hold()
        defer { work.release(hold) }
        let finishing = Task { await work.finish(within: .seconds(600)) }
        await Self.waitUntilWaiting(work)
        finishing.cancel()
        #expect(await finishing.value == .cancelled)
        #expect(work.waiting == 0)
    }

    /// A cleanup runs uncancelled though its caller was cancelled (an aborted upload's abort).
    @Test func aCleanupIsNotReachedByItsCallersCancellation() async {
        let work = FlowPendingWorkSet()
        let caller = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await work.run { Task.isCancelled }
        }
        #expect(await caller.value == false)
        #expect(work.count == 0)
    }
}
