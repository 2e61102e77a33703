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

private func placed(_ id: UInt64, _ labels: [String: String]) -> WireTask {
    var task = WireTask(taskID: id, op: "EchoOp", groupElement: .integer(Int64(id)), elementIndex: Int(id))
    task.placement = labels.map { WireLabel(key: $0.key, value: $0.value) }.sorted()
    return task
}

private func tasksSent(_ actions: [DispatchCore<UInt64>.Action]) -> [Data: [WireTask]] {
    var byPeer: [Data: [WireTask]] = [:]
    for case .send(let peer, .task(let tasks)) in actions { byPeer[peer, default: []] += tasks }
    return byPeer
}

/// Placement (a step's `on:`, issue 50 item 2): a placed task goes only to a worker with every
/// label, `host` and `name` counting; it waits for one, and fails naming the labels nobody has.
@Suite struct PlacementTests {
    private func labelled() -> DispatchCore<UInt64> {
        var core = DispatchCore<UInt64>(configuration: .init(workerTimeout: .seconds(2)))
        _ = core.receive(ready("rec", features: WireReady.Feature.labels), from: recorder, now: at(0))
        _ = core.receive(.labels([WireLabel(key: "role", value: "recorder")]), from: recorder, now: at(0))
        _ = core.receive(ready("plain", features: 0), from: plain, now: at(0))
        return core
    }

    @Test func aPlacedTaskGoesOnlyToAWorkerWithEveryLabelAndNeverCarriesItsPlacement() {
        var core = labelled()
        for id: UInt64 in 1...4 { core.submit(placed(id, ["role": "recorder"]), waiter: id) }
        core.submit(placed(5, ["name": "plain"]), waiter: 5)
        core.submit(placed(6, ["host": "host-rec", "role": "recorder"]), waiter: 6)
        core.submit(WireTask(taskID: 7, op: "EchoOp", groupElement: .integer(7), elementIndex: 7), waiter: 7)
        let sent = tasksSent(core.dispatch(now: at(0.1)))
        // The recorder's 2 slots take two of its tasks; the plain worker takes the one placed on its
        // name and the one placed nowhere, never a recorder's.
        #expect(sent[recorder]?.map(\.taskID) == [1, 2])
        #expect(Set(sent[plain]?.map(\.taskID) ?? []) == [5, 7])
        #expect(sent.values.joined().allSatisfy { $0.placement.isEmpty }, "a worker is never told where it may run")
        #expect(core.queue.contains(3) && core.queue.contains(4) && core.queue.contains(6))
    }

    @Test func aWorkerWhoseLabelsAreNotKnownYetTakesNoPlacedTask() {
        var core = DispatchCore<UInt64>(configuration: .init())
        _ = core.receive(ready("rec", features: WireReady.Feature.labels), from: recorder, now: at(0))
        core.submit(placed(1, ["name": "rec"]), waiter: 1)
        core.submit(WireTask(taskID: 2, op: "EchoOp", groupElement: .integer(2), elementIndex: 2), waiter: 2)
        #expect(tasksSent(core.dispatch(now: at(0.1)))[recorder]?.map(\.taskID) == [2])
        _ = core.receive(.labels([]), from: recorder, now: at(0.2))
        #expect(tasksSent(core.dispatch(now: at(0.3)))[recorder]?.map(\.taskID) == [1])
    }

    @Test func aTaskNoWorkerHasTheLabelsOfFailsAfterTheWorkerTimeOutNamingThem() {
        var core = labelled()
        core.submit(placed(1, ["role": "camera", "site": "b"]), waiter: 1)
        #expect(tasksSent(core.dispatch(now: at(0.1))).isEmpty)
        let waiting = core.tick(now: at(1)).filter { if case .finish = $0 { true } else { false } }
        #expect(waiting.isEmpty, "it waits for a worker with the labels")
        for peer in [recorder, plain] { _ = core.receive(.heartbeat, from: peer, now: at(3)) }
        let failed = core.tick(now: at(3.5)).compactMap { action -> FlowTaskResult? in
            if case .finish(1, let result) = action { return result } else { return nil }
        }
        #expect(failed.count == 1)
        let text = failed.first.map { "\($0.state)" } ?? ""
        #expect(text.contains("role=camera, site=b"), "\(text)")
        #expect(text.contains("--label role=camera --label site=b"), "\(text)")
        #expect(text.contains("plain, rec"), "\(text)")
    }

    @Test func tasksWaitingForAHostAreReportedOnceWhileTheOthersGoOn() {
        var core = labelled()
        for id: UInt64 in 1...3 { core.submit(placed(id, ["host": "h3"]), waiter: id) }
        core.submit(placed(4, ["role": "recorder"]), waiter: 4)
        #expect(tasksSent(core.dispatch(now: at(0.1)))[recorder]?.map(\.taskID) == [4], "the others go on")
        let waits = { (actions: [DispatchCore<UInt64>.Action]) -> [ClusterEvent] in
            reports(actions).filter { if case .waitingForLabels = $0 { true } else { false } }
        }
        #expect(waits(core.tick(now: at(0.5))) == [.waitingForLabels(labels: "host=h3", op: "EchoOp", tasks: 3, timeout: .seconds(2))])
        #expect(waits(core.tick(now: at(1))).isEmpty, "said once")
        // A worker of h3 comes and goes: the wait is said again.
        let h3 = Data("h3".utf8)
        _ = core.receive(ready("w3", features: WireReady.Feature.labels), from: h3, now: at(1.1))
        _ = core.receive(.labels([WireLabel(key: "host", value: "h3")]), from: h3, now: at(1.1))
        _ = core.dispatch(now: at(1.2))
        for peer in [recorder, plain] { _ = core.receive(.heartbeat, from: peer, now: at(1.2)) }
        #expect(waits(core.tick(now: at(1.3))).isEmpty)
        _ = core.receive(.disconnect(reason: "bye"), from: h3, now: at(1.4))
        #expect(waits(core.tick(now: at(1.5))).count == 1)
    }

    @Test func aGroupsAffinityTimeoutFailsItsWaitingElementsSoonerThanTheWorkerTimeOut() {
        var core = labelled()
        var quick = placed(1, ["host": "h9"])
        quick.placementWait = .milliseconds(500)
        core.submit(quick, waiter: 1)
        core.submit(placed(2, ["host": "h9"]), waiter: 2)
        _ = core.dispatch(now: at(0.1))
        _ = core.tick(now: at(0.2))
        let failed = core.tick(now: at(0.8)).compactMap { action -> UInt64? in if case .finish(let id, _) = action { id } else { nil } }
        #expect(failed == [1], "the element with affinityTimeout 0.5 s, not the other (worker time-out 2 s)")
    }

    @Test func aPoolAdmitsAPlacedTaskOnlyForAFreeWorkerWithItsLabels() {
        var core = labelled()
        var free = core.freeSlots()
        let onRecorder = [WireLabel(key: "role", value: "recorder")]
        var admitted = free.admits("EchoOp", placement: onRecorder)
        #expect(admitted)
        free.take("EchoOp", placement: onRecorder)
        free.take("EchoOp", placement: onRecorder)
        // Both of the recorder's slots are spoken for: a third waits, while the plain worker's slots
        // still admit a task placed nowhere.
        admitted = free.admits("EchoOp", placement: onRecorder)
        #expect(!admitted)
        admitted = free.admits("EchoOp")
        #expect(admitted)
        // Labels nobody has: admitted, so that the machine fails it after the worker time-out.
        admitted = free.admits("EchoOp", placement: [WireLabel(key: "role", value: "nobody")])
        #expect(admitted)
    }

    @Test func aClientSendsAPlacementOnlyToAPoolThatPlacesTasks() {
        for features in [WireWelcome.Feature.placement, 0] {
            var core = DispatchCore<UInt64>(configuration: .init())
            let pool = Data("pool".utf8)
            _ = core.registerPool(WireWelcome(poolName: "p", features: features, slotCount: 8, heartbeatIntervalMilliseconds: 1000),
                                  peer: pool, now: at(0))
            core.submit(placed(1, ["role": "recorder"]), waiter: 1)
            let sent = tasksSent(core.dispatch(now: at(0.1)))[pool] ?? []
            if features == 0 {
                #expect(sent.isEmpty, "a pool that does not place tasks gets none that is placed")
            } else {
                #expect(sent.first?.placement == [WireLabel(key: "role", value: "recorder")])
            }
        }
    }
}

/// `affinity: prefer` (issue 50 item 4): an element's preferred labels hold while a worker with them
/// is connected, and are set aside once none is.
@Suite struct PreferenceTests {
    @Test func aPreferredWorkerIsWaitedForWhileConnectedAndSetAsideOnceGone() {
        var core = DispatchCore<UInt64>(configuration: .init())
        _ = core.receive(ready("rec", features: WireReady.Feature.labels), from: recorder, now: at(0))
        _ = core.receive(.labels([WireLabel(key: "host", value: "b1")]), from: recorder, now: at(0))
        _ = core.receive(ready("plain", features: 0), from: plain, now: at(0))
        for id: UInt64 in 1...3 {
            var task = WireTask(taskID: id, op: "EchoOp", groupElement: .integer(Int64(id)), elementIndex: Int(id))
            task.preference = [WireLabel(key: "host", value: "b1")]
            core.submit(task, waiter: id)
        }
        let first = tasksSent(core.dispatch(now: at(0.1)))
        // The preferred worker's 2 slots take two; the third waits for it, not for the plain worker.
        #expect(first[recorder]?.map(\.taskID) == [1, 2])
        #expect(first[plain] == nil)
        #expect(first.values.joined().allSatisfy { $0.preference.isEmpty }, "a worker is never told its preference")
        // Once b1's worker is gone, the rest go anywhere (its two come back as lost).
        _ = core.receive(.disconnect(reason: "bye"), from: recorder, now: at(0.2))
        let after = tasksSent(core.dispatch(now: at(0.3)))
        #expect(Set(after[plain]?.map(\.taskID) ?? []) == [1, 2], "plain's 2 slots")
        #expect(core.queue == [3])
    }
}
