import Testing
@testable import Flow

/// ``FlowPendingWork/finish(within:)`` is woken by the last release, not by polling, and gives up
/// at its limit. (Holds are process-wide, and other suites' uploads may hold too: the checks
/// allow for that.) Serialized: run side by side, one test's hold was still there when the first
/// test's `finish` returned and gone when it checked (ThreadSanitizer pass, a starved pool).
@Suite(.serialized) struct PendingWorkTests {
    /// The limit is far beyond the test's own time, so that a starved test task (the
    /// ThreadSanitizer pass once kept it from releasing its hold for the whole of a 60 s limit)
    /// still releases before it: `finish` returns true only if the release woke it.
    @Test(.timeLimit(.minutes(15))) func finishReturnsWhenTheLastHoldIsReleased() async {
        let hold = FlowPendingWork.hold()
        let finished = Task { await FlowPendingWork.finish(within: .seconds(600)) }
        for _ in 0..<100 { await Task.yield() }
        FlowPendingWork.release(hold)
        let result = await finished.value
        #expect(result || FlowPendingWork.count > 0, "finish gave up though nothing was held")
    }

    @Test func finishGivesUpAtItsLimitWhileSomethingIsHeld() async {
        let hold = FlowPendingWork.hold()
        defer { FlowPendingWork.release(hold) }
        #expect(await FlowPendingWork.finish(within: .milliseconds(50)) == false)
    }

    @Test func aCancelledFinishReturns() async {
        let hold = FlowPendingWork.hold()
        defer { FlowPendingWork.release(hold) }
        let finishing = Task { await FlowPendingWork.finish(within: .seconds(600)) }
        finishing.cancel()
        #expect(await finishing.value == false)
    }
}
