import Foundation
import Synchronization
import Testing
@testable import Flow

/// A Swift blueprint's group over an `AsyncSequence` (issue 49): the elements are handed to the
/// group a page at a time as the sequence yields them, the group starting before it has ended.
@Suite struct SequenceGroupTests {
    /// Triples its element; fails on negative ones.
    final class TripleOp: FlowOperation, FlowOperationCreator, @unchecked Sendable {
        static func create() -> FlowOperation { TripleOp() }
        override var primaryInputParamKey: String { "x" }
        override var primaryOutputParamKey: String { "y" }
        override func mainLogic() {
            guard let item: Int = getData(name: "x") else { return }
            if item < 0 {
                finishWithError(error: FlowError.inputData("negative \(item)"))
                return
            }
            setData(name: "y", value: item * 3)
            finishSuccessfully()
        }
    }

    /// Counts elements as a sequence yields them, and those an op ran before the sequence ended;
    /// `ran` hears each op that runs.
    final class Watch: Sendable {
        let yielded = Atomic<Int>(0)
        let ended = Atomic<Bool>(false)
        let ranBeforeTheEnd = Atomic<Int>(0)
        let (ran, ranContinuation) = AsyncStream<Void>.makeStream()
    }

    /// As ``TripleOp``, noting whether the sequence had ended when it ran.
    final class WatchedOp: FlowOperation, FlowOperationCreator, @unchecked Sendable {
        nonisolated(unsafe) static var watch = Watch()
        static func create() -> FlowOperation { WatchedOp() }
        override var primaryInputParamKey: String { "x" }
        override var primaryOutputParamKey: String { "y" }
        override func mainLogic() {
            guard let item: Int = getData(name: "x") else { return }
            if !Self.watch.ended.load(ordering: .acquiring) { Self.watch.ranBeforeTheEnd.add(1, ordering: .relaxed) }
            Self.watch.ranContinuation.yield()
            setData(name: "y", value: item * 3)
            finishSuccessfully()
        }
    }

    /// 5,000 elements (five pages) yielded one at a time: the outputs come in input order, and the
    /// group starts while the sequence goes on (it yields no more past 3,000 until an op has run:
    /// the group has had its two pages by then).
    @Test func aGroupRunsOverAnAsyncSequenceWhileItIsRead() async {
        let watch = Watch()
        WatchedOp.watch = watch
        let count = 5_000
        let elements = AsyncStream<Int>(unfolding: {
            let index = watch.yielded.add(1, ordering: .relaxed).oldValue
            guard index < count else {
                watch.ended.store(true, ordering: .releasing)
                return nil
            }
            if index == 3_000 {
                var ran = watch.ran.makeAsyncIterator()
                _ = await ran.next()
            }
            return index
        })
        let run = Flow()
        run.addGrouped(operationCreator: WatchedOp.self,
                       dispatcher: FlowArrayGroupDispatcher(elements: elements, outputKey: "tripled", maxConcurrentOperationCount: 8))
        await run.run()
        #expect(run.isSuccess, "\(run.error.map { String(describing: $0) } ?? "")")
        #expect(run.dataBucket["tripled"] as? [Int] == (0..<count).map { $0 * 3 })
        #expect(watch.ranBeforeTheEnd.load(ordering: .relaxed) > 0, "the group started before the sequence ended")
    }

    struct Broken: Error {}

    /// A sequence that throws fails the group once the elements it had are done; one that yields
    /// nothing fails it as an empty input does.
    @Test func aSequenceThatThrowsOrYieldsNothingFailsTheGroup() async {
        let throwing = AsyncThrowingStream<Int, any Error> { continuation in
            for index in 0..<2_500 { continuation.yield(index) }
            continuation.finish(throwing: Broken())
        }
        let failed = Flow()
        failed.addGrouped(operationCreator: TripleOp.self,
                          dispatcher: FlowArrayGroupDispatcher(elements: throwing, outputKey: "tripled", maxConcurrentOperationCount: 4))
        await failed.run()
        #expect(!failed.isSuccess)
        #expect(failed.error is Broken, "\(String(describing: failed.error))")
        #expect(failed.generateSummary().contains("the sequence of its elements failed"))

        let empty = Flow()
        empty.addGrouped(operationCreator: TripleOp.self, dispatcher: FlowArrayGroupDispatcher(elements: AsyncStream<Int> { $0.finish() }))
        await empty.run()
        #expect(!empty.isSuccess)
        #expect(empty.generateSummary().contains("the sequence of its elements yielded none"))
    }

    /// A group that fails stops reading its sequence, even one that would never end.
    @Test func aFailedGroupStopsReadingItsSequence() async {
        let watch = Watch()
        let endless = AsyncStream<Int>(unfolding: {
            let index = watch.yielded.add(1, ordering: .relaxed).oldValue
            if index % 100 == 0 { await Task.yield() }
            return index == 1_500 ? -1 : index
        })
        let run = Flow()
        run.addGrouped(operationCreator: TripleOp.self, dispatcher: FlowArrayGroupDispatcher(elements: endless, maxConcurrentOperationCount: 4))
        await run.run()
        #expect(!run.isSuccess)
        #expect(run.generateSummary().contains("negative -1"))
    }
}
