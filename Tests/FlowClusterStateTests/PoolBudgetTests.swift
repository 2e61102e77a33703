import Flow
import FlowWire
import Foundation
import Testing
@testable import FlowCluster

private let t0 = ContinuousClock.now
private func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .microseconds(Int64(seconds * 1_000_000)) }

/// A pool holds its clients' group budgets (PROTOCOL.md §15.2 "Pools", WELCOME bit 0), without
/// sockets: a client's budget id becomes one of the pool's, its RATE is divided among the pool's
/// workers, and their PROGRESS goes back to the client under its own task ids.
@Suite struct PoolBudgetTests {
    static let client = Data("client".utf8)
    static let workers = [Data("w1".utf8), Data("w2".utf8)]

    /// A pool with two workers of 2 slots (progress and requests features) and a client that
    /// submitted 4 tasks of its budget 7, dispatched.
    private static func pool() -> (PoolStateMachine, welcome: WireWelcome?, tasks: [Data: [WireTask]]) {
        var pool = PoolStateMachine(configuration: .init())
        for (index, peer) in workers.enumerated() {
            let ready = WireReady(workerName: "w\(index + 1)", features: WireReady.Feature.progress | WireReady.Feature.requests, slotCount: 2,
                                  ops: ["UploadFileOp"], hostname: "h", processID: 1, heartbeatIntervalMilliseconds: 60_000)
            _ = pool.receive(.ready(ready), from: peer, now: at(0))
        }
        var welcome: WireWelcome?
        let hello = WireHello(clientName: "c", runID: "r", flowName: "f", origin: "o", share: 1, heartbeatIntervalMilliseconds: 60_000)
        for case .send(_, .welcome(let sent)) in pool.receive(.hello(hello), from: client, now: at(0)) { welcome = sent }
        let tasks = (1...4).map { id -> WireTask in
            var task = WireTask(taskID: UInt64(id), op: "UploadFileOp", groupElement: .integer(Int64(id)), elementIndex: id)
            task.budget = 7
            return task
        }
        _ = pool.receive(.submit(tasks), from: client, now: at(0))
        var sent: [Data: [WireTask]] = [:]
        for case .send(let peer, .task(let batch)) in pool.dispatch(now: at(0)) { sent[peer, default: []] += batch }
        return (pool, welcome, sent)
    }

    private static func rates(_ actions: [PoolStateMachine.Action]) -> [Data: [WireRate]] {
        var rates: [Data: [WireRate]] = [:]
        for case .send(let peer, .rate(let entries)) in actions { rates[peer, default: []] += entries }
        return rates
    }

    @Test func theClientsRateIsDividedAmongThePoolsWorkersOnlyOnceItCame() {
        var (pool, welcome, sent) = Self.pool()
        #expect(welcome.map { $0.features & WireWelcome.Feature.budgets != 0 } == true, "WELCOME announces bit 0")
        #expect(sent.values.flatMap { $0 }.map(\.budget) == [0, 0, 0, 0], "the pool's own budget id stands for the client's 7")
        #expect(Self.rates(pool.tick(now: at(0.1))).isEmpty, "no RATE before the client's: the workers wait for one")
        _ = pool.receive(.rate([WireRate(budget: 7, bytesPerSecond: 4_000_000), .requests(budget: 7, perMille: 10_000)]), from: Self.client,
                         now: at(0.2))
        let rates = Self.rates(pool.tick(now: at(0.3)))
        for worker in Self.workers {
            #expect(rates[worker] == [WireRate(budget: 0, bytesPerSecond: 2_000_000), .requests(budget: 0, perMille: 5_000)], "\(rates)")
        }
    }

    @Test func theWorkersProgressGoesBackToTheClientUnderItsTaskIds() throws {
        var (pool, _, sent) = Self.pool()
        let worker = Self.workers[0]
        let poolIDs = try #require(sent[worker]?.map(\.taskID))
        let actions = pool.receive(.progress([WireProgress(taskID: poolIDs[0], attempt: 1, bytes: 1000), .requests(taskID: poolIDs[1], count: 2),
                                              WireProgress(taskID: 999, attempt: 1, bytes: 5)]), from: worker, now: at(0.5))
        var relayed: [WireProgress] = []
        for case .send(Self.client, .progress(let entries)) in actions { relayed += entries }
        let clientIDs = relayed.map(\.taskID)
        #expect(relayed.count == 2 && Set(clientIDs).isSubset(of: [1, 2, 3, 4]), "\(relayed)")
        #expect(relayed.map(\.attempt) == [1, 0] && relayed.map(\.bytes) == [1000, 2])
    }

    /// The client's side: a pool that set WELCOME's bit 0 is sent the budget ids and the whole
    /// rate (bytes and requests); an earlier pool is sent neither.
    @Test(arguments: [true, false])
    func aClientSendsBudgetsOnlyToAPoolThatHoldsThem(holds: Bool) {
        var machine = DispatchCore<UInt64>(configuration: .init(liveness: 1000, workerTimeout: .seconds(600)))
        let pool = Data("pool".utf8)
        let welcome = WireWelcome(poolName: "p", features: holds ? WireWelcome.Feature.budgets : 0, slotCount: 64,
                                  heartbeatIntervalMilliseconds: 60_000)
        _ = machine.registerPool(welcome, peer: pool, now: at(0))
        machine.setBudget(id: 0, name: "UploadFileOp", rates: FlowLimitRates(bytesPerSecond: 4_000_000, requestsPerSecond: 100),
                          maxConcurrent: 1000, adaptive: false, now: at(0))
        machine.submit(WireTask(taskID: 1, op: "UploadFileOp", groupElement: .integer(1), elementIndex: 1), waiter: 1, budget: 0)
        var budgets: [UInt64?] = []
        var rates: [WireRate] = []
        // The pool's first task of the budget comes after its share, in the same turn (§15.2).
        for action in machine.dispatch(now: at(0)) {
            if case .send(_, .task(let tasks)) = action { budgets += tasks.map(\.budget) }
            if case .send(pool, .rate(let entries)) = action { #expect(budgets.isEmpty, "RATE before TASK"); rates += entries }
        }
        #expect(budgets == [holds ? 0 : nil])
        #expect(rates == (holds ? [WireRate(budget: 0, bytesPerSecond: 4_000_000), .requests(budget: 0, perMille: 100_000)] : []))
        var later: [WireRate] = []
        for case .send(pool, .rate(let entries)) in machine.tick(now: at(0.05)) { later += entries }
        #expect(later.isEmpty, "sent once")
    }

    /// A client that leaves gives its budgets back: the pool's next client gets the same id once
    /// no task of the one that left is on its way back, so a standing pool keeps as many budgets
    /// as runs at once.
    @Test func aLeavingClientsBudgetIsReusedOnceItsTasksAreBack() throws {
        var (pool, _, sent) = Self.pool()
        let first = try #require(sent.values.flatMap { $0 }.first?.budget)
        _ = pool.removeClient(Self.client, reason: "done")
        func submit(from client: Data, name: String, id: UInt64) -> UInt64? {
            let hello = WireHello(clientName: name, runID: name, flowName: "f", origin: "o", share: 1, heartbeatIntervalMilliseconds: 60_000)
            _ = pool.receive(.hello(hello), from: client, now: at(1))
            var task = WireTask(taskID: id, op: "UploadFileOp", groupElement: .integer(1), elementIndex: 1)
            task.budget = 3
            _ = pool.receive(.submit([task]), from: client, now: at(1))
            // The id the SUBMIT's budget 3 was given (asked again, it is the same one).
            var machine = pool.core
            return UInt64(pool.budgets.id(for: 3, of: client, name: name, in: &machine))
        }
        let second = submit(from: Data("second".utf8), name: "second", id: 1)
        #expect(second != nil && second != first, "the first client's tasks are still on their way back: \(String(describing: second))")
        // The workers answer the stopped tasks: nothing carries the first budget any more.
        for (worker, tasks) in sent {
            let answers = tasks.map { WireResult(taskID: $0.taskID, attempt: $0.attempt, finishState: .cancelled, startedAt: Date(),
                                                 finishedAt: Date(), elementIndex: $0.elementIndex) }
            _ = pool.receive(.result(answers), from: worker, now: at(2))
        }
        #expect(submit(from: Data("third".utf8), name: "third", id: 1) == first, "the third client's budget takes the freed id")
    }
}
