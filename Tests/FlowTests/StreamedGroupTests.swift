import Foundation
import Synchronization
import Testing
@testable import Flow

/// A serial op that emits its list a page at a time (``FlowOperation/emit(_:to:)``) feeds the
/// group after it while it goes on: the group starts on the second page, ends when the op has
/// finished and the last element is done, holds the op back when it is far behind, and stops it
/// when the group fails; without such a group the pages become the op's output list.
@Suite struct StreamedGroupTests {
    /// What the emitting op saw.
    final class Producer: Sendable {
        private let state = Mutex((emitted: 0, furthestAhead: 0, stoppedByGroup: false, finished: false))
        func emitted(_ count: Int, started: Int) {
            state.withLock { state in
                state.emitted += count
                state.furthestAhead = max(state.furthestAhead, state.emitted - started)
            }
        }
        func stopped() { state.withLock { $0.stoppedByGroup = true } }
        func finish() { state.withLock { $0.finished = true } }
        var emitted: Int { state.withLock { $0.emitted } }
        var furthestAhead: Int { state.withLock { $0.furthestAhead } }
        var stoppedByGroup: Bool { state.withLock { $0.stoppedByGroup } }
        var finished: Bool { state.withLock { $0.finished } }
    }

    /// `EchoOp` and `PrintOp` (``probeRegistry(_:sleepMilliseconds:)``), and `ListOp`, which emits
    /// `count` items `i0`, `i1`, … to `items` in pages of `page`; with `waitForGroup` it waits after
    /// its second page until the group has started an element (so it cannot end before the group
    /// starts); with `failAfter` it fails after that many pages.
    static func registry(_ probe: ConcurrencyProbe, _ producer: Producer, count: Int, page: Int, waitForGroup: Bool = false,
                         failAfter: Int? = nil, sleep: @escaping @Sendable (String) -> Int = { _ in 0 }) -> FlowOperationRegistry {
        var registry = probeRegistry(probe, sleepMilliseconds: sleep)
        registry.register("ListOp") { _ in
            FlowClosureOperation(name: "ListOp") { op in
                defer { producer.finish() }
                var pages = 0
                for start in stride(from: 0, to: count, by: page) {
                    if let failAfter, pages == failAfter { throw TestFailure(item: "page \(pages)") }
                    let items: [Any] = (start..<min(count, start + page)).map { "i\($0)" }
                    do {
                        try await op.emit(items, to: "items")
                    } catch {
                        producer.stopped()
                        throw error
                    }
                    producer.emitted(items.count, started: probe.startedNames.count)
                    pages += 1
                    if waitForGroup, pages == 2 {
                        let started = await probe.changes.wait(timeout: .seconds(30)) { !probe.startedNames.isEmpty }
                        if !started { throw TestFailure(item: "the group never started while the op ran") }
                    }
                }
            }
        }
        return registry
    }

    static func flow(_ registry: FlowOperationRegistry, maxConcurrent: Int, allowFailure: Bool = false, then group: Bool = true) -> Flow {
        let next: FlowStep = group
            ? .group(FlowGroupStep(op: "EchoOp", input: "items", output: "results", maxConcurrent: maxConcurrent, allowFailure: allowFailure))
            : .operation(FlowOperationStep(op: "PrintOp", parameters: ["message": "after"]))
        return Flow(definition: FlowDefinition(name: "streamed", bucket: [:], steps: [.operation(FlowOperationStep(op: "ListOp")), next]),
                    registry: registry)
    }

    @Test(arguments: [1, 4, 0])
    func theGroupStartsOnTheFirstPageAndRunsEveryElementInOrder(maxConcurrent: Int) async {
        // 0: the batched drive, 4 at once.
        let probe = ConcurrencyProbe()
        let producer = Producer()
        let registry = Self.registry(probe, producer, count: 2_500, page: 100, waitForGroup: true)
        let flow = Self.flow(registry, maxConcurrent: maxConcurrent == 0 ? 4 : maxConcurrent)
        if maxConcurrent == 0 { _ = flow.setExecutor(LocalBatchExecutor(registry: registry)) }
        await flow.run()
        #expect(flow.isSuccess, "\(flow.generateSummary())")
        let results = flow.dataBucket["results"] as? [Any]
        #expect(results?.compactMap { $0 as? String } == (0..<2_500).map { "out_i\($0)" })
        // The list went to the group, never into the bucket.
        #expect(flow.dataBucket["items"] == nil)
        #expect(producer.emitted == 2_500 && producer.finished)
    }

    @Test func aListOfOnePageIsKnownWholeBeforeItsGroupStarts() async {
        let probe = ConcurrencyProbe()
        let events = GroupInputFileTests.Events()
        let flow = Self.flow(Self.registry(probe, Producer(), count: 60, page: 100), maxConcurrent: 4)
            .setProgressHandler { events.record($0) }
        await flow.run()
        #expect(flow.isSuccess)
        #expect(events.all.first == "started 60", "\(events.all)")
        #expect(flow.generateSummary().contains("group created: 60"))
    }

    @Test func withoutAGroupAfterItThePagesBecomeTheOpsOutputList() async {
        let probe = ConcurrencyProbe()
        let flow = Self.flow(Self.registry(probe, Producer(), count: 2_500, page: 100), maxConcurrent: 4, then: false)
        await flow.run()
        #expect(flow.isSuccess)
        #expect((flow.dataBucket["items"] as? [Any])?.compactMap { $0 as? String } == (0..<2_500).map { "i\($0)" })
    }

    @Test func anOpFarAheadOfTheGroupWaits() async {
        let probe = ConcurrencyProbe()
        let producer = Producer()
        // 2,000 items in pages of 10; the group runs 4 at once, each element 1 ms.
        let registry = Self.registry(probe, producer, count: 2_000, page: 10) { _ in 1 }
        let flow = Self.flow(registry, maxConcurrent: 4)
        await flow.run()
        #expect(flow.isSuccess)
        // Ahead of the elements started by at most the waiting pages, the page being handed out
        // and the elements taken but not started yet.
        let bound = (FlowElementStream.window + 1) * 10 + 4
        #expect(producer.furthestAhead <= bound, "the op ran \(producer.furthestAhead) elements ahead (bound \(bound))")
    }

    @Test func anOpThatFailsEndsThePairAfterTheElementsItGave() async {
        let probe = ConcurrencyProbe()
        let flow = Self.flow(Self.registry(probe, Producer(), count: 2_500, page: 100, failAfter: 3), maxConcurrent: 4)
        await flow.run()
        #expect(!flow.isSuccess)
        #expect(flow.generateSummary().contains("failed on page 3"))
        #expect(Set(probe.startedNames).isSubset(of: Set((0..<300).map { "i\($0)" })))
    }

    @Test func aGroupThatFailsStopsTheOp() async {
        let probe = ConcurrencyProbe()
        let producer = Producer()
        // The element i150 fails; the op has 100,000 items to give.
        let registry = Self.registry(probe, producer, count: 100_000, page: 100)
        var failing = registry
        failing.register("EchoOp", primaryInputParamKey: "item", primaryOutputParamKey: "result") { _ in
            FlowClosureOperation(name: "EchoOp", primaryInputParamKey: "item", primaryOutputParamKey: "result") { op in
                let item: String = try op.value("item")
                probe.enter(item)
                defer { probe.leave() }
                if item == "i150" { throw TestFailure(item: item) }
                op.set("result", "out_" + item)
            }
        }
        let flow = Self.flow(failing, maxConcurrent: 4)
        await flow.run()
        #expect(!flow.isSuccess)
        #expect(flow.generateSummary().contains("failed on i150"))
        #expect(producer.stoppedByGroup && producer.emitted < 100_000, "the op went on after the group failed: \(producer.emitted)")
    }
}
