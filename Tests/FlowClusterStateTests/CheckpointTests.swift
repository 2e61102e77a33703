import Flow
import FlowWire
import Foundation
import Testing
@testable import FlowCluster

private let t0 = ContinuousClock.now
private func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .microseconds(Int64(seconds * 1_000_000)) }

/// Checkpoints (PROTOCOL.md §7.9) without sockets: the coordinator asks workers that read them,
/// keeps the latest a worker sends for a task, hands it to the task's submitter, and sends it
/// with the task when the task goes to another worker.
@Suite struct CheckpointTests {
    typealias Machine = DispatchCore<UInt64>

    private static func ready(_ name: String, features: UInt32) -> WireMessage {
        .ready(WireReady(workerName: name, features: features, slotCount: 1, ops: ["UploadFileOp"], hostname: "test", processID: 1,
                         heartbeatIntervalMilliseconds: 60_000))
    }

    /// A group element whose step keeps checkpoints (`null`: none saved yet).
    private static func element(_ id: UInt64, checkpoint: FlowValue? = .null) -> WireTask {
        var task = WireTask(taskID: id, op: "UploadFileOp", groupElement: .integer(Int64(id)), elementIndex: Int(id))
        task.checkpoint = checkpoint
        return task
    }

    private static func sentTasks(_ actions: [Machine.Action]) -> [(peer: Data, task: WireTask)] {
        var sent: [(Data, WireTask)] = []
        for case .send(let peer, .task(let tasks)) in actions { sent += tasks.map { (peer, $0) } }
        return sent
    }

    private static func checkpoints(_ actions: [Machine.Action]) -> [(waiter: UInt64, index: Int, value: FlowValue)] {
        var found: [(UInt64, Int, FlowValue)] = []
        for case .checkpoint(let waiter, let index, let value) in actions { found.append((waiter, index, value)) }
        return found
    }

    private static let all = WireReady.Feature.operationAttempt | WireReady.Feature.checkpoint

    @Test func onlyAWorkerThatReadsCheckpointsIsAskedForThem() {
        var machine = Machine(configuration: .init(liveness: 1000, workerTimeout: .seconds(600)))
        _ = machine.receive(Self.ready("new", features: Self.all), from: Data("new".utf8), now: at(0))
        _ = machine.receive(Self.ready("old", features: WireReady.Feature.operationAttempt), from: Data("old".utf8), now: at(0))
        machine.submit(Self.element(1, checkpoint: .integer(3)), waiter: 1)
        machine.submit(Self.element(2, checkpoint: .integer(3)), waiter: 2)
        let sent = Self.sentTasks(machine.dispatch(now: at(0)))
        #expect(sent.count == 2)
        for (peer, task) in sent {
            if peer == Data("new".utf8) {
                #expect(task.checkpoint == .some(.integer(3)), "bit 6: the checkpoint goes with the TASK")
            } else {
                #expect(task.checkpoint == Optional<FlowValue>.none, "no bit 6: flags bit 4 stays clear")
            }
        }
    }

    @Test func theLatestCheckpointGoesToTheSubmitterAndWithTheTaskToTheNextWorker() throws {
        var machine = Machine(configuration: .init(liveness: 1000, workerTimeout: .seconds(600)))
        let (w1, w2) = (Data("w1".utf8), Data("w2".utf8))
        _ = machine.receive(Self.ready("w1", features: Self.all), from: w1, now: at(0))
        machine.submit(Self.element(4), waiter: 40)
        let first = try #require(Self.sentTasks(machine.dispatch(now: at(0))).first)
        #expect(first.peer == w1 && first.task.checkpoint == .some(.null))
        var actions: [Machine.Action] = []
        machine.receive(.checkpoint([WireCheckpoint(taskID: 4, attempt: 1, value: .integer(1))]), from: w1, now: at(0.1), into: &actions)
        machine.receive(.checkpoint([WireCheckpoint(taskID: 4, attempt: 1, value: .integer(2))]), from: w1, now: at(0.2), into: &actions)
        let handed = Self.checkpoints(actions)
        #expect(handed.map(\.waiter) == [40, 40] && handed.map(\.index) == [4, 4])
        #expect(handed.map(\.value) == [.integer(1), .integer(2)])
        // w1 leaves; w2 gets the task with what w1's op saved last.
        _ = machine.receive(.disconnect(reason: "bye"), from: w1, now: at(0.3))
        _ = machine.receive(Self.ready("w2", features: Self.all), from: w2, now: at(0.4))
        let again = try #require(Self.sentTasks(machine.dispatch(now: at(0.4))).first)
        #expect(again.peer == w2 && again.task.attempt == 2)
        #expect(again.task.checkpoint == .some(.integer(2)), "the re-sent TASK carries the latest checkpoint")
    }

    @Test func aCheckpointFromAnotherWorkerAnOldAttemptOrAnUnaskedTaskIsIgnored() {
        var machine = Machine(configuration: .init(liveness: 1000, workerTimeout: .seconds(600)))
        let (w1, w2) = (Data("w1".utf8), Data("w2".utf8))
        _ = machine.receive(Self.ready("w1", features: Self.all), from: w1, now: at(0))
        _ = machine.receive(Self.ready("w2", features: Self.all), from: w2, now: at(0))
        machine.submit(Self.element(1), waiter: 1)
        machine.submit(Self.element(2, checkpoint: .none), waiter: 2)
        let sent = Self.sentTasks(machine.dispatch(now: at(0)))
        let onW1 = sent.first { $0.peer == w1 }!.task.taskID
        var actions: [Machine.Action] = []
        machine.receive(.checkpoint([WireCheckpoint(taskID: onW1, attempt: 1, value: 9)]), from: w2, now: at(0.1), into: &actions)
        machine.receive(.checkpoint([WireCheckpoint(taskID: onW1, attempt: 2, value: 9)]), from: w1, now: at(0.1), into: &actions)
        machine.receive(.checkpoint([WireCheckpoint(taskID: 77, attempt: 1, value: 9)]), from: w1, now: at(0.1), into: &actions)
        let unasked: UInt64 = 2
        let unaskedPeer = sent.first { $0.task.taskID == unasked }!.peer
        machine.receive(.checkpoint([WireCheckpoint(taskID: unasked, attempt: 1, value: 9)]), from: unaskedPeer, now: at(0.1), into: &actions)
        #expect(Self.checkpoints(actions).isEmpty, "\(actions)")
        #expect(machine.tasks[1]?.task.checkpoint == .some(.null) && machine.tasks[2]?.task.checkpoint == Optional<FlowValue>.none)
    }

    /// A pool (WELCOME bit 1) passes a client's checkpoint to a worker that reads them, and relays
    /// the worker's CHECKPOINT to the client under the client's task id and attempt, before the
    /// task's DONE.
    @Test func aPoolPassesCheckpointsBothWays() throws {
        var pool = PoolStateMachine(configuration: .init())
        let (client, worker) = (Data("client".utf8), Data("w1".utf8))
        let ready = WireReady(workerName: "w1", features: Self.all, slotCount: 1, ops: ["UploadFileOp"], hostname: "h", processID: 1,
                              heartbeatIntervalMilliseconds: 60_000)
        _ = pool.receive(.ready(ready), from: worker, now: at(0))
        var welcome: WireWelcome?
        let hello = WireHello(clientName: "c", runID: "r", flowName: "f", origin: "o", share: 1, heartbeatIntervalMilliseconds: 60_000)
        for case .send(_, .welcome(let sent)) in pool.receive(.hello(hello), from: client, now: at(0)) { welcome = sent }
        #expect(welcome.map { $0.features & WireWelcome.Feature.checkpoints != 0 } == true, "WELCOME announces bit 1")
        var task = Self.element(5, checkpoint: .string("saved"))
        task.attempt = 2
        _ = pool.receive(.submit([task]), from: client, now: at(0))
        var sent: [WireTask] = []
        for case .send(worker, .task(let batch)) in pool.dispatch(now: at(0)) { sent += batch }
        let onWorker = try #require(sent.first)
        #expect(onWorker.checkpoint == .some(.string("saved")))
        let relayed = pool.receive(.checkpoint([WireCheckpoint(taskID: onWorker.taskID, attempt: onWorker.attempt, value: "more")]),
                                   from: worker, now: at(0.1))
        var entries: [WireCheckpoint] = []
        for case .send(client, .checkpoint(let batch)) in relayed { entries += batch }
        #expect(entries == [WireCheckpoint(taskID: 5, attempt: 2, value: "more")], "\(relayed)")
    }

    /// The client's side: only a pool that set WELCOME's bit 1 is sent checkpoints in SUBMIT.
    @Test(arguments: [true, false])
    func aClientSendsCheckpointsOnlyToAPoolThatRelaysThem(relays: Bool) {
        var machine = Machine(configuration: .init(liveness: 1000, workerTimeout: .seconds(600)))
        let welcome = WireWelcome(poolName: "p", features: relays ? WireWelcome.Feature.checkpoints : 0, slotCount: 64,
                                  heartbeatIntervalMilliseconds: 60_000)
        _ = machine.registerPool(welcome, peer: Data("pool".utf8), now: at(0))
        machine.submit(Self.element(1, checkpoint: .integer(4)), waiter: 1)
        var checkpoints: [FlowValue?] = []
        for case .send(_, .task(let tasks)) in machine.dispatch(now: at(0)) { checkpoints += tasks.map(\.checkpoint) }
        #expect(checkpoints == [relays ? .some(.integer(4)) : .none])
    }
}
