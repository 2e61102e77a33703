import Flow
import FlowWire
import Foundation
import Testing
@testable import FlowCluster

/// The client half of the pool protocol (§14) as a pure machine: WELCOME, DONE, DISCONNECT,
/// silence and HELLO again, with no socket.
@Suite struct PoolClientStateMachineTests {
    typealias Machine = DispatchCore<UInt64>
    let t0 = ContinuousClock.now
    let pool = PoolClientStateMachine.peer

    func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .milliseconds(Int64(seconds * 1000)) }

    func welcome(slots: UInt32 = 4, features: UInt32 = WireWelcome.Feature.budgets | WireWelcome.Feature.checkpoints) -> WireMessage {
        .welcome(WireWelcome(poolName: "pool@host", features: features, slotCount: slots, heartbeatIntervalMilliseconds: 1000))
    }

    func task(_ id: UInt64) -> WireTask { WireTask(taskID: id, op: "AnyOp", groupElement: .integer(Int64(id)), elementIndex: Int(id)) }

    func result(_ id: UInt64, attempt: UInt32) -> WireResult {
        WireResult(taskID: id, attempt: attempt, finishState: .successfully, startedAt: Date(), finishedAt: Date(), events: [],
                   elementIndex: Int(id), output: .integer(Int64(id) * 10))
    }

    /// A client welcomed by a pool with `slots`, and `count` tasks submitted to it.
    func welcomedClient(tasks count: UInt64, slots: UInt32 = 4) -> (PoolClientStateMachine, Machine, [Machine.Action]) {
        var client = PoolClientStateMachine(endpoint: "tcp://127.0.0.1:1", now: at(0))
        var machine = Machine(configuration: .init())
        var actions: [Machine.Action] = []
        let out = client.receive(welcome(slots: slots), into: &machine, now: at(0.1), actions: &actions)
        #expect(out == [.refusal(nil)])
        for id in 1...max(1, count) where count > 0 { machine.submit(task(id), waiter: id) }
        actions += machine.dispatch(now: at(0.2))
        return (client, machine, actions)
    }

    @Test func welcomeRegistersThePoolAsOneWorkerThatTakesAnyOp() {
        let (client, machine, actions) = welcomedClient(tasks: 3)
        #expect(client.welcomed)
        #expect(machine.workers[pool]?.name == "pool pool@host")
        let submitted = actions.flatMap { action -> [UInt64] in
            if case .send(let peer, .task(let tasks)) = action, peer == pool { return tasks.map(\.taskID) }
            return []
        }
        #expect(submitted == [1, 2, 3])
    }

    /// A STATUS-REPLY listing `workers` (name, host, labels).
    func statusReply(_ workers: [(String, String, [String: String])]) -> WireMessage {
        let listed = workers.map { name, host, labels in
            PoolStatus.Worker(name: name, host: host, slots: 2, busy: 0, ops: ["ListFilesOp"], labels: labels)
        }
        let json = String(decoding: try! PoolStatus.encoder.encode(PoolStatus(pool: "pool@host", workers: listed, runs: [])), as: UTF8.self)
        return .statusReply(json)
    }

    func statusSends(_ actions: [Machine.Action]) -> Int {
        actions.filter { if case .send(let peer, .status) = $0 { peer == pool } else { false } }.count
    }

    @Test func eachWorkerAsksThePoolForItsWorkersAfterItsWelcomeAndTakesTheirListByName() {
        var client = PoolClientStateMachine(endpoint: "tcp://127.0.0.1:1", now: at(0))
        var machine = Machine(configuration: .init())
        var actions: [Machine.Action] = []
        // Asked before the pool welcomed the run: STATUS waits for WELCOME.
        client.askWorkers(actions: &actions)
        #expect(statusSends(actions) == 0)
        _ = client.receive(welcome(features: WireWelcome.Feature.placement), into: &machine, now: at(0.1), actions: &actions)
        #expect(statusSends(actions) == 1)
        // Asked again once welcomed: STATUS at once.
        actions = []
        client.askWorkers(actions: &actions)
        #expect(statusSends(actions) == 1)
        let out = client.receive(statusReply([("w2", "h2", ["role": "recorder"]), ("w1", "h1", [:])]), into: &machine, now: at(1), actions: &actions)
        let expected = [FlowCoordinator.ConnectedWorker(name: "w1", host: "h1", slots: 2, labels: [:]),
                        FlowCoordinator.ConnectedWorker(name: "w2", host: "h2", slots: 2, labels: ["role": "recorder"])]
        #expect(out == [.workers(.listed(expected))])
        #expect(expected[1].allLabels == ["host": "h2", "name": "w2", "role": "recorder"])
    }

    @Test func aStatusReplyNobodyAskedForIsASignOfLifeOnlyAndAPoolThatPlacesNoTaskSaysSo() {
        var client = PoolClientStateMachine(endpoint: "tcp://127.0.0.1:1", now: at(0))
        var machine = Machine(configuration: .init())
        var actions: [Machine.Action] = []
        _ = client.receive(welcome(), into: &machine, now: at(0.1), actions: &actions)
        #expect(client.receive(statusReply([("w1", "h1", [:])]), into: &machine, now: at(1), actions: &actions).isEmpty)
        // A pool without placement (WELCOME's bit 3) cannot send a task to one of its workers.
        client.askWorkers(actions: &actions)
        #expect(client.receive(statusReply([("w1", "h1", [:])]), into: &machine, now: at(2), actions: &actions) == [.workers(.placesNoTasks)])
        // A reply that is not a pool's status is no list.
        #expect(client.receive(.statusReply("not json"), into: &machine, now: at(3), actions: &actions).isEmpty)
    }

    @Test func doneHandsEachResultOnWithTheWorkerThatRanIt() {
        var (client, machine, _) = welcomedClient(tasks: 2)
        var actions: [Machine.Action] = []
        let done = WireMessage.done([WirePoolResult(worker: "w-7", result: result(2, attempt: 1)),
                                     WirePoolResult(worker: "w-3", result: result(1, attempt: 1))])
        #expect(client.receive(done, into: &machine, now: at(1), actions: &actions).isEmpty)
        let answers = actions.compactMap { action -> (UInt64, String)? in
            if case .answer(let waiter, _, _, let worker) = action { return (waiter, worker) }
            return nil
        }
        #expect(answers.map(\.0) == [2, 1])
        #expect(answers.map(\.1) == ["w-7", "w-3"])
        #expect(machine.tasks.isEmpty)
    }

    @Test func aResultForAnotherAttemptIsDiscarded() {
        var (client, machine, _) = welcomedClient(tasks: 1)
        var actions: [Machine.Action] = []
        _ = client.receive(.done([WirePoolResult(worker: "w", result: result(1, attempt: 9))]), into: &machine, now: at(1), actions: &actions)
        #expect(!actions.contains { if case .answer = $0 { true } else { false } })
        #expect(machine.tasks[1] != nil)
    }

    @Test func aRegisteredPoolsDisconnectLosesItsTasksAndSaysHelloAgainAtOnce() {
        var (client, machine, _) = welcomedClient(tasks: 2)
        var actions: [Machine.Action] = []
        let out = client.receive(.disconnect(reason: "pool stopping"), into: &machine, now: at(1), actions: &actions)
        #expect(out.last == .reconnect)
        #expect(!out.contains { if case .refusal = $0 { true } else { false } })
        #expect(machine.workers[pool] == nil)
        // Its tasks wait for the pool's next WELCOME, with the next attempt.
        #expect(machine.queue == [1, 2])
        #expect(machine.tasks[1]?.task.attempt == 2)
        client.saidHello(now: at(1))
        #expect(!client.welcomed)
        actions = []
        _ = client.receive(welcome(), into: &machine, now: at(1.5), actions: &actions)
        let resent = machine.dispatch(now: at(1.6)).compactMap { action -> [UInt64]? in
            if case .send(_, .task(let tasks)) = action { return tasks.map(\.taskID) }
            return nil
        }
        #expect(resent == [[1, 2]])
    }

    @Test func aRefusalBeforeWelcomeIsSaidOnceAndHelloWaitsForTheWindow() {
        var client = PoolClientStateMachine(endpoint: "tcp://127.0.0.1:1", now: at(0))
        var machine = Machine(configuration: .init())
        var actions: [Machine.Action] = []
        let reason = "this key may not submit runs"
        let first = client.receive(.disconnect(reason: reason), into: &machine, now: at(0.1), actions: &actions)
        #expect(first == [.log(.warning, "the pool at tcp://127.0.0.1:1 refused this run: \(reason)"), .refusal(reason)])
        let second = client.receive(.disconnect(reason: reason), into: &machine, now: at(0.2), actions: &actions)
        #expect(second == [.refusal(reason)])
        #expect(client.refusal == reason)
        // No WELCOME: HELLO again only once the window has passed since the last HELLO.
        #expect(client.tick(machine, window: .seconds(3), now: at(2.9)).isEmpty)
        #expect(client.tick(machine, window: .seconds(3), now: at(3.0)) == [.reconnect])
    }

    @Test func aSilentPoolIsLostByTheMachineAndTheClientSaysHelloAgain() {
        var (client, machine, _) = welcomedClient(tasks: 1)
        #expect(client.tick(machine, window: .seconds(3), now: at(1)).isEmpty)
        // 3 missed intervals of 1 s: the machine declares the pool dead...
        let lost = machine.tick(now: at(3.5))
        #expect(lost.contains { if case .report(.workerLost(let name, _, 1)) = $0 { name == "pool pool@host" } else { false } })
        // ... and the client reconnects.
        let out = client.tick(machine, window: .seconds(3), now: at(3.5))
        #expect(out == [.log(.info, "the pool at tcp://127.0.0.1:1 went silent; saying HELLO again"), .reconnect])
    }

    @Test func everyMessageFromThePoolIsASignOfLife() {
        var (client, machine, _) = welcomedClient(tasks: 1)
        var actions: [Machine.Action] = []
        // STATUS-REPLY and an undecodable FLOW02 message keep the pool alive like a heartbeat.
        _ = client.receive(.statusReply("{}"), into: &machine, now: at(2.5), actions: &actions)
        #expect(machine.workers[pool]?.lastReceived == at(2.5))
        client.heardMalformed(into: &machine, now: at(5))
        #expect(machine.workers[pool]?.lastReceived == at(5))
        #expect(!machine.tick(now: at(7)).contains { if case .report(.workerLost) = $0 { true } else { false } })
        #expect(client.tick(machine, window: .seconds(3), now: at(7)).isEmpty)
    }

    @Test func aHeldRunAndAPoolWithoutBudgetsAreSaid() {
        var client = PoolClientStateMachine(endpoint: "tcp://p:1", now: at(0))
        var machine = Machine(configuration: .init())
        var actions: [Machine.Action] = []
        let out = client.receive(welcome(features: WireWelcome.Feature.held), into: &machine, now: at(0.1), actions: &actions)
        #expect(out.count == 3)
        #expect(out.contains { if case .log(.warning, let text) = $0 { text.contains("predates group budgets") } else { false } })
        #expect(out.contains(.log(.warning, PoolClientStateMachine.heldText(endpoint: "tcp://p:1"))))
        // The pool offers every op and carries WELCOME's credit as its slots.
        #expect(machine.workers[pool]?.slots == 4)
        #expect(machine.workers[pool]?.offers("AnythingOp") == true)
    }

    @Test func aTaskTooLargeToSubmitFailsAsThePoolsAnswer() {
        var (client, machine, _) = welcomedClient(tasks: 1)
        var actions: [Machine.Action] = []
        var refused = result(1, attempt: 1)
        refused.finishState = .withError("too large to submit")
        refused.isPermanent = true
        client.refuse([refused], into: &machine, now: at(1), actions: &actions)
        let outcomes = actions.compactMap { action -> FlowFinishState? in
            if case .answer(_, let result, _, _) = action { return result.finishState }
            return nil
        }
        #expect(outcomes == [.withError("too large to submit")])
    }
}
