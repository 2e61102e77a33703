import Testing
@testable import Flow

/// ``FlowPendingWork/finish(within:)`` is woken by the last release, not by polling, and gives up
/// at its limit. (Holds are process-wide, and other suites' uploads may hold too: the checks
/// allow for that.) Serialized: run side by side, one test's hold was still there when the first
/// test's `finish` returned and gone when it checked (ThreadSanitizer pass, a starved pool).
@Suite(.serialized) struct PendingWorkTests {
    @Test func finishReturnsWhenTheLastHoldIsReleased() async {
        let hold = FlowPendingWork.hold()
        let finished = Task { await FlowPendingWork.finish(within: .seconds(60)) }
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
