import Flow
import FlowWire
import Foundation
import Testing
@testable import FlowCluster

private let t0 = ContinuousClock.now
private func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .microseconds(Int64(seconds * 1_000_000)) }

/// A group's `requestsPerSecond` beyond op starts (PROTOCOL.md §15, feature bit 5), without
/// sockets: the coordinator's division of the requests rate into request-rate entries, its count
/// of request entries against the starts' bucket, and the worker's requests bucket.
@Suite struct RequestBudgetTests {
    typealias Machine = DispatchCore<UInt64>
    static let both = WireReady.Feature.progress | WireReady.Feature.requests

    /// A machine with workers of the given slots and features, a budget 0 of `requests` a second
    /// (and `bytes`), `tasks` of it submitted and dispatched at 0.
    private static func machine(slots: [UInt32], features: [UInt32], requests: Double?, bytes: Int64? = nil,
                                tasks: Int) -> (Machine, [Data]) {
        let (machine, peers, _) = machineAndRates(slots: slots, features: features, requests: requests, bytes: bytes, tasks: tasks)
        return (machine, peers)
    }

    /// ``machine(slots:features:requests:bytes:tasks:)``, and the RATE entries its dispatches sent, by worker.
    private static func machineAndRates(slots: [UInt32], features: [UInt32], requests: Double?, bytes: Int64? = nil,
                                        tasks: Int) -> (Machine, [Data], [Data: [WireRate]]) {
        var machine = Machine(configuration: .init(liveness: 1000, workerTimeout: .seconds(600)))
        let peers = slots.indices.map { Data("w\($0 + 1)".utf8) }
        for (index, peer) in peers.enumerated() {
            let ready = WireReady(workerName: "w\(index + 1)", features: features[index], slotCount: slots[index], ops: ["UploadFileOp"],
                                  hostname: "test", processID: 1, heartbeatIntervalMilliseconds: 60_000)
            _ = machine.receive(.ready(ready), from: peer, now: at(0))
        }
        machine.setBudget(id: 0, name: "UploadFileOp", rates: FlowLimitRates(bytesPerSecond: bytes, requestsPerSecond: requests),
                          maxConcurrent: 1000, adaptive: false, now: at(0))
        for id in 1...UInt64(tasks) {
            machine.submit(WireTask(taskID: id, op: "UploadFileOp", groupElement: .integer(Int64(id)), elementIndex: Int(id)), waiter: id, budget: 0)
        }
        // Dispatched over a second, as the starts' bucket lets them go.
        var rates: [Data: [WireRate]] = [:]
        for step in 0...20 { rates.merge(Self.rates(machine.dispatch(now: at(Double(step) * 0.05))), uniquingKeysWith: +) }
        return (machine, peers, rates)
    }

    private static func rates(_ actions: [Machine.Action]) -> [Data: [WireRate]] {
        var rates: [Data: [WireRate]] = [:]
        for case .send(let peer, .rate(let entries)) in actions { rates[peer, default: []] += entries }
        return rates
    }

    @Test func theRequestsRateIsDividedByRunningTasksAndSentOnlyToWorkersWithBitFive() {
        // 100 a second: 4 tasks start within the first second, 2 on each worker.
        var (machine, peers, rates) = Self.machineAndRates(slots: [2, 2], features: [Self.both, WireReady.Feature.progress], requests: 100,
                                                           tasks: 4)
        #expect(machine.workers[peers[0]]!.inFlight.count == 2 && machine.workers[peers[1]]!.inFlight.count == 2)
        // Sent as the tasks were dispatched: each worker's first share with its first task, the
        // other's share again as it moved.
        #expect(rates[peers[0]]?.first == WireRate(budget: 0, bytesPerSecond: 0), "a bytes entry (no bytes limit) first")
        #expect(rates[peers[0]]?.last == .requests(budget: 0, perMille: 50_000), "half of 100 a second, in thousandths, at last")
        #expect(rates[peers[1]] == [WireRate(budget: 0, bytesPerSecond: 0)], "a worker without bit 5 gets no request-rate entry")
        #expect(Self.rates(machine.tick(now: at(1.05))).isEmpty, "nothing changed: no RATE again")
        machine.setBudget(id: 0, name: "UploadFileOp", rates: FlowLimitRates(requestsPerSecond: 10), maxConcurrent: 1000, adaptive: false,
                          now: at(2))
        #expect(Self.rates(machine.tick(now: at(2.05)))[peers[0]] == [.requests(budget: 0, perMille: 5_000)], "a changed rate, alone")
        machine.setBudget(id: 0, name: "UploadFileOp", rates: FlowLimitRates(), maxConcurrent: 1000, adaptive: false, now: at(3))
        #expect(Self.rates(machine.tick(now: at(3.05)))[peers[0]] == [.requests(budget: 0, perMille: 0)], "`off` is sent as 0")
    }

    @Test func requestEntriesHoldBackTheNextStarts() {
        // 2 a second, 1 slot: the first task starts at once; 4 reported parts put the starts'
        // bucket 2 s in debt (at most 1 s of it is kept), so the next start waits about 1.5 s.
        var (machine, peers) = Self.machine(slots: [1, 1], features: [Self.both, Self.both], requests: 2, tasks: 1)
        let running = machine.workers[peers[0]]!.inFlight.first ?? machine.workers[peers[1]]!.inFlight.first!
        let holder = machine.workers[peers[0]]!.inFlight.isEmpty ? peers[1] : peers[0]
        let ignored = machine.receive(.progress([.requests(taskID: running, count: 4)]), from: holder == peers[0] ? peers[1] : peers[0],
                                      now: at(1))
        #expect(ignored.isEmpty, "another worker's request entry is ignored without a word")
        _ = machine.receive(.progress([.requests(taskID: running, count: 4)]), from: holder, now: at(1))
        #expect(machine.budgetStatuses.first?.requestsReported == 4)
        machine.submit(WireTask(taskID: 2, op: "UploadFileOp", groupElement: .integer(2), elementIndex: 2), waiter: 2, budget: 0)
        #expect(Self.tasks(machine.dispatch(now: at(1.2))).isEmpty, "the starts wait for the parts' debt")
        #expect(Self.tasks(machine.dispatch(now: at(2.4))).isEmpty)
        #expect(Self.tasks(machine.dispatch(now: at(2.6))) == [2], "one token again 1.5 s on")
    }

    @Test func aWorkerWithoutBitFiveCannotDrawOnTheRequestsRate() {
        var (machine, peers) = Self.machine(slots: [1], features: [WireReady.Feature.progress], requests: 2, tasks: 1)
        let running = machine.workers[peers[0]]!.inFlight.first!
        _ = machine.receive(.progress([.requests(taskID: running, count: 4)]), from: peers[0], now: at(1))
        #expect(machine.budgetStatuses.first?.requestsReported == 0)
    }

    private static func tasks(_ actions: [Machine.Action]) -> [UInt64] {
        var ids: [UInt64] = []
        for case .send(_, .task(let tasks)) in actions { ids += tasks.map(\.taskID) }
        return ids
    }

    @Test func theStartsBucketKeepsAtMostASecondOfDebt() {
        var bucket = RequestTokenBucket(rate: 10)
        let first = bucket.take(now: at(0))
        #expect(first)
        bucket.debit(50, now: at(0))
        let next = bucket.nextToken(now: at(0)) - at(1.1)
        #expect(next > .microseconds(-2) && next < .microseconds(2), "10 in debt at most, and one more to start: \(next)")
        let early = bucket.take(now: at(1.05))
        let late = bucket.take(now: at(1.11))
        #expect(!early && late)
    }

    @Test func theWorkerHoldsRequestsToItsShareAndReportsThem() async throws {
        let budgets = WorkerByteBudgets(reportInterval: .milliseconds(200), firstRateWait: .milliseconds(50))
        budgets.set([WireRate(budget: 0, bytesPerSecond: 0), .requests(budget: 0, perMille: 20_000)])
        let task = WireTaskReference(taskID: 7, attempt: 1)
        let started = ContinuousClock.now
        for _ in 0..<5 { try await budgets.requested(task: task, budget: 0) }
        // 20 a second keeps a tenth of a second (2): the 5th goes (5 - 1 - 2) / 20 s after the rate came.
        #expect(ContinuousClock.now - started >= .milliseconds(80))
        try await budgets.sent(10, task: task, budget: 0)
        #expect(budgets.takeProgress(now: .now) == [WireProgress(taskID: 7, attempt: 1, bytes: 10), .requests(taskID: 7, count: 5)])
    }

    @Test func aBytesRateWithoutARequestsRateMeansNoRequestsLimit() async throws {
        let budgets = WorkerByteBudgets(reportInterval: .milliseconds(200), firstRateWait: .seconds(30))
        budgets.set([WireRate(budget: 3, bytesPerSecond: 1000)])
        let task = WireTaskReference(taskID: 9, attempt: 2)
        let started = ContinuousClock.now
        for _ in 0..<1000 { try await budgets.requested(task: task, budget: 3) }
        #expect(ContinuousClock.now - started < .seconds(20), "neither held nor waiting for a requests rate (a coordinator without bit 5)")
        #expect(budgets.takeProgress(now: .now) == [.requests(taskID: 9, count: 1000)])
    }
}
