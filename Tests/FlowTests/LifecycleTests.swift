import Foundation
import Testing
@testable import Flow

final class ForgetfulOp: FlowOperation, @unchecked Sendable {
    override func mainLogic() {}
}

/// Runs until cancelled (or 10 s), then finishes; records whether it saw the cancellation.
/// It waits for ``didCancel()``, which the flow calls once it has marked it cancelled.
final class LongOp: FlowOperation, @unchecked Sendable {
    private let seen = NSLock()
    private var sawCancellation = false
    var observedCancellation: Bool { seen.withLock { sawCancellation } }
    let started = DispatchSemaphore(value: 0)
    /// Signalled once it has looked at `isCancelled`, the look recorded.
    let looked = DispatchSemaphore(value: 0)
    private let cancelSignal = DispatchSemaphore(value: 0)

    override func mainLogic() {
        started.signal()
        _ = cancelSignal.wait(timeout: .now() + 10)
        seen.withLock { sawCancellation = isCancelled }
        looked.signal()
        finishSuccessfully()
    }

    override func didCancel() {
        super.didCancel()
        cancelSignal.signal()
    }
}

/// Waits for `semaphore` on a Dispatch thread, not the cooperative pool, at most `seconds`.
///
/// - Returns: whether it was signalled in time.
func signalled(_ semaphore: DispatchSemaphore, within seconds: Double) async -> Bool {
    await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        DispatchQueue.global().async { continuation.resume(returning: semaphore.wait(timeout: .now() + seconds) == .success) }
    }
}

@Suite struct LifecycleTests {
    @Test func blocksRunBeforeAndAfterAndRunWaitsForTheDidFinishBlock() async {
        let order = ConcurrencyProbe()
        let flow = Flow().setDataBucket(dataBucket: ["k": "v"])
            .add(operation: FlowClosureOperation(name: "Op") { _ in order.enter("op") })
            .setWillStartBlock { flow in order.enter("willStart:\(flow.dataBucket["k"] as? String ?? "")") }
            .setDidFinishBlock { flow in order.enter("didFinish:\(flow.isSuccess)") }
        await flow.run()
        #expect(order.startedNames == ["willStart:v", "op", "didFinish:true"])
    }

    @Test func anOpThatReturnsWithoutFinishingFailsInsteadOfHanging() async {
        let flow = Flow().add(operation: ForgetfulOp()).add(operation: NoteOp("never"))
        await flow.run()
        #expect(!flow.isSuccess)
        #expect(notes(flow).isEmpty)
        #expect(masked(flow).contains { $0.hasPrefix("[ForgetfulOp] DidFinish: withError: ForgetfulOp.mainLogic() returned without finishing") })
    }

    @Test func cancelStopsTheFlowAndTheRunningOpSeesIt() async {
        let long = LongOp()
        let flow = Flow().add(operation: long).add(operation: NoteOp("never"))
        let run = Task { await flow.run() }
        let started = await signalled(long.started, within: 60)
        #expect(started, "LongOp did not start within 60 s")
        flow.cancel()
        await run.value
        #expect(!flow.isSuccess)
        #expect(flow.isCancelled)
        #expect(notes(flow).isEmpty)
        let lines = masked(flow)
        #expect(lines.contains("[LongOp] DidFinish: cancelled"))
        #expect(lines.contains("[Flow] cancelled"))
        #expect(flow.error as? FlowError == .cancelled)
        #expect(await signalled(long.looked, within: 2), "LongOp did not look at its cancellation within 2 s of the flow's end")
        #expect(long.observedCancellation)
    }

    @Test func cancellingAnAsyncOpCancelsItsTask() async {
        // The op would sleep 300 s; the bound is far above what a cancel takes, so that a loaded
        // suite (17 s seen once, the cooperative threads held by other tests) does not fail it.
        let sleeping = DispatchSemaphore(value: 0)
        let flow = Flow().add(operation: FlowClosureOperation(name: "SleepyOp") { _ in
            sleeping.signal()
            try await Task.sleep(for: .seconds(300))
        })
        let run = Task { await flow.run() }
        #expect(await signalled(sleeping, within: 60), "SleepyOp did not start within 60 s")
        let started = Date()
        flow.cancel()
        await run.value
        #expect(Date().timeIntervalSince(started) < 120)
        #expect(masked(flow).contains("[Flow] cancelled"))
    }

    @Test func failureHandlersRunAndAreFilteredByErrorType() async {
        struct Expired: Error {}
        let calls = ConcurrencyProbe()
        let flow = Flow()
            .add(operation: FlowClosureOperation(name: "FailOp") { _ in throw TestFailure(item: "x") })
            .onFailure { error in calls.enter("any:\(error)") }
            .onFailure(TestFailure.self) { error in calls.enter("typed:\(error.item)") }
            .onFailure(Expired.self) { _ in calls.enter("expired") }
            .setDidFinishBlock { _ in calls.enter("didFinish") }
        await flow.run()
        #expect(calls.startedNames == ["any:failed on x", "typed:x", "didFinish"])
        #expect((flow.error as? TestFailure)?.item == "x")
    }

    @Test func asyncOpsMapMissingAndMistypedValuesToTheSeedStates() async {
        let flow = Flow().setDataBucket(dataBucket: ["n": "x"])
            .add(operation: FlowClosureOperation(name: "TypedOp") { op in _ = try op.value("n", as: Int.self) })
        await flow.run()
        #expect(masked(flow).contains(
            "[TypedOp] DidFinish: withMismatchInputDataType: <n> in data bucket is <x> with type <String>, but NOT type <Int>."))

        let missing = Flow().add(operation: FlowClosureOperation(name: "TypedOp") { op in _ = try op.value("m", as: Int.self) })
        await missing.run()
        #expect(masked(missing).contains("[TypedOp] DidFinish: withInsufficientInputData: can't find <m> in data bucket"))
        #expect(!missing.isSuccess)
    }

    @Test func startIsFireAndForgetAndRunWaitsForTheSameRun() async {
        let count = ConcurrencyProbe()
        let flow = Flow().add(operation: FlowClosureOperation(name: "CountOp") { _ in
            count.enter("ran")
            try await Task.sleep(for: .milliseconds(50))
        })
        flow.start()
        await flow.run()
        #expect(count.startedNames == ["ran"])
        #expect(flow.isSuccess)
    }

    @Test func finishingTwiceKeepsTheFirstResult() async {
        final class TwiceOp: FlowOperation, @unchecked Sendable {
            override func mainLogic() {
                finishSuccessfully()
                finishWithError(error: TestFailure(item: "late"))
                log(message: "after finish")
            }
        }
        let flow = Flow().add(operation: TwiceOp())
        await flow.run()
        #expect(flow.isSuccess)
        #expect(!masked(flow).contains("[TwiceOp] after finish"))
    }
}
