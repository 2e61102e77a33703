import Flow
import FlowWire
import Foundation
import Testing
@testable import FlowCluster

private let t0 = ContinuousClock.now
private let recorder = Data("recorder".utf8)
private let plain = Data("plain".utf8)

private func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .microseconds(Int64(seconds * 1_000_000)) }

private func ready(_ name: String, features: UInt32) -> WireMessage {
    .ready(WireReady(workerName: name, features: features, slotCount: 2, ops: ["EchoOp"], hostname: "host-\(name)", processID: 1))
}

private func sentTo(_ peer: Data, _ actions: [DispatchCore<UInt64>.Action]) -> [WireMessage] {
    actions.compactMap { if case .send(peer, let message) = $0 { return message } else { return nil } }
}

private func reports(_ actions: [DispatchCore<UInt64>.Action]) -> [ClusterEvent] {
    actions.compactMap { if case .report(let event) = $0 { return event } else { return nil } }
}

/// Worker labels (LABELS, PROTOCOL.md §7.10): a worker that has labels sets READY's bit 7, the
/// coordinator asks with an empty LABELS, the worker answers with its labels.
@Suite struct WorkerLabelTests {
    @Test func aCoordinatorAsksAWorkerWithLabelsAndKeepsWhatItSays() {
        var core = DispatchCore<UInt64>(configuration: .init())
        let joined = core.receive(ready("rec", features: WireReady.Feature.labels), from: recorder, now: at(0))
        #expect(sentTo(recorder, joined) == [.labels([])])
        #expect(core.workers[recorder]?.labelsKnown == false)
        let before = core.workers.generation

        let answered = core.receive(.labels([WireLabel(key: "role", value: "recorder"), WireLabel(key: "host", value: "node-7")]),
                                    from: recorder, now: at(0.1))
        #expect(reports(answered) == [.workerLabels(name: "rec", labels: "host=node-7 role=recorder")])
        let worker = core.workers[recorder]
        #expect(worker?.labelsKnown == true)
        #expect(worker?.labels == ["role": "recorder", "host": "node-7"])
        // A label it gives wins over the host name its READY said; `name` is its name.
        #expect(worker?.allLabels == ["role": "recorder", "host": "node-7", "name": "rec"])
        #expect(core.workers.generation != before, "a status shows the list again")
    }

    @Test func aWorkerWithoutLabelsIsNotAskedAndHasItsHostAndName() {
        var core = DispatchCore<UInt64>(configuration: .init())
        let joined = core.receive(ready("plain", features: WireReady.Feature.queue), from: plain, now: at(0))
        #expect(sentTo(plain, joined).isEmpty)
        #expect(core.workers[plain]?.labelsKnown == true)
        #expect(core.workers[plain]?.allLabels == ["host": "host-plain", "name": "plain"])
        // LABELS from a worker that did not announce them is unexpected (§9.2): dropped.
        let unasked = core.receive(.labels([WireLabel(key: "role", value: "x")]), from: plain, now: at(0.1))
        #expect(reports(unasked) == [.unexpectedMessage(worker: "plain", command: "LABELS")])
        #expect(core.workers[plain]?.labels == [:])
    }

    @Test func aWorkerAnswersTheQuestionWithItsLabelsAndOnlyIfItAnnouncedThem() throws {
        let configuration = FlowWorker.Configuration(endpoint: "tcp://127.0.0.1:9", name: "w1", concurrency: 1)
        var labelled = configuration
        labelled.labels = ["zone": "b", "role": "recorder"]
        let registry = FlowOperationRegistry()
        #expect(WorkerIOLoop.ready(for: labelled, registry: registry).features & WireReady.Feature.labels != 0)
        #expect(WorkerIOLoop.ready(for: configuration, registry: registry).features & WireReady.Feature.labels == 0)

        let said = [WireLabel(key: "role", value: "recorder"), WireLabel(key: "zone", value: "b")]
        var machine = WorkerStateMachine(configuration: .init(ready: WorkerIOLoop.ready(for: labelled, registry: registry), labels: said,
                                                              slots: 1), now: at(0))
        _ = machine.connected(now: at(0))
        let answer = machine.received(.labels([]), now: at(0.1))
        let messages = answer.compactMap { action -> WireMessage? in if case .send(let message) = action { return message } else { return nil } }
        #expect(messages == [.labels(said)])

        var unlabelled = WorkerStateMachine(configuration: .init(ready: WorkerIOLoop.ready(for: configuration, registry: registry), slots: 1),
                                            now: at(0))
        _ = unlabelled.connected(now: at(0))
        let dropped = unlabelled.received(.labels([]), now: at(0.1))
        #expect(dropped.allSatisfy { if case .send = $0 { false } else { true } }, "nothing is sent for a feature it did not announce")
    }

    @Test func labelsAreCheckedAsTheyAreWritten() throws {
        #expect(try Labels.parse(["role=recorder", "zone=", "path=a=b"]) == ["role": "recorder", "zone": "", "path": "a=b"])
        #expect(throws: ClusterError.self) { try Labels.parse(["role"]) }
        #expect(throws: ClusterError.self) { try Labels.parse(["=x"]) }
        #expect(throws: ClusterError.self) { try Labels.parse(["bad key=x"]) }
        #expect(throws: ClusterError.self) { try Labels.parse(["k=line\nbreak"]) }
        #expect(throws: ClusterError.self) { try Labels.parse((0...64).map { "k\($0)=v" }) }
        var configuration = FlowWorker.Configuration(endpoint: "tcp://127.0.0.1:9", name: "w1", concurrency: 1)
        configuration.labels = ["bad key": "x"]
        var registry = FlowOperationRegistry()
        registry.register("EchoOp") { _ in FlowOperation() }
        #expect(throws: ClusterError.self) { try FlowWorker(configuration: configuration, registry: registry, logger: .init(label: "test")) }
    }
}
