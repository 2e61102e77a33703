import Flow
import FlowWire
import Foundation
import Synchronization
import Testing
@testable import FlowCluster

private let t0 = ContinuousClock.now
private func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .microseconds(Int64(seconds * 1_000_000)) }

/// Group bytes budgets (PROTOCOL.md §15) without sockets: the coordinator's division of a budget
/// into RATEs, its count of PROGRESS, the worker's token bucket, on a manual clock.
@Suite struct ByteBudgetTests {
    typealias Machine = DispatchCore<UInt64>

    private static func ready(_ name: String, slots: UInt32, features: UInt32 = WireReady.Feature.progress) -> WireMessage {
        .ready(WireReady(workerName: name, features: features, slotCount: slots, ops: ["UploadFileOp"], hostname: "test", processID: 1,
                         heartbeatIntervalMilliseconds: 60_000))
    }

    private static func element(_ id: UInt64) -> WireTask {
        WireTask(taskID: id, op: "UploadFileOp", groupElement: .integer(Int64(id)), elementIndex: Int(id))
    }

    /// A machine with workers `w1`… of the given slots, a budget 0 of `bytes` a second, `tasks`
    /// of it submitted and dispatched.
    /// The dispatch's RATEs come too, by worker: every share goes before the first TASK.
    private static func machine(slots: [UInt32], features: [UInt32]? = nil, bytes: Int64?, tasks: Int)
        -> (Machine, [Data], [WireMessage], [Data: [WireRate]]) {
        var machine = Machine(configuration: .init(liveness: 1000, workerTimeout: .seconds(600)))
        let peers = slots.indices.map { Data("w\($0 + 1)".utf8) }
        for (index, peer) in peers.enumerated() {
            _ = machine.receive(ready("w\(index + 1)", slots: slots[index], features: features?[index] ?? WireReady.Feature.progress),
                                from: peer, now: at(0))
        }
        machine.setBudget(id: 0, name: "UploadFileOp", rates: FlowLimitRates(bytesPerSecond: bytes), maxConcurrent: 1000, adaptive: false,
                          now: at(0))
        for id in 1...UInt64(tasks) { machine.submit(element(id), waiter: id, budget: 0) }
        var sent: [WireMessage] = []
        var firstRates: [Data: [WireRate]] = [:]
        for case .send(let peer, let message) in machine.dispatch(now: at(0)) {
            sent.append(message)
            guard case .rate(let entries) = message else { continue }
            #expect(!sent.dropLast().contains { if case .task = $0 { true } else { false } }, "the shares go before the TASKs")
            firstRates[peer, default: []] += entries
        }
        return (machine, peers, sent, firstRates)
    }

    private static func rates(_ actions: [Machine.Action]) -> [Data: [WireRate]] {
        var rates: [Data: [WireRate]] = [:]
        for case .send(let peer, .rate(let entries)) in actions { rates[peer, default: []] += entries }
        return rates
    }

    @Test func aBudgetIsDividedByTheTasksRunningOnEachWorker() {
        // 3 + 1 slots, 4 tasks: 3 run on w1, 1 on w2.
        var (machine, peers, sent, first) = Self.machine(slots: [3, 1], bytes: 40_000_000, tasks: 4)
        let budgets = sent.flatMap { message -> [UInt64?] in if case .task(let tasks) = message { tasks.map(\.budget) } else { [] } }
        #expect(budgets == [0, 0, 0, 0], "every TASK of the group carries its budget")
        #expect(first[peers[0]] == [WireRate(budget: 0, bytesPerSecond: 30_000_000)], "with the first TASK, before it")
        #expect(first[peers[1]] == [WireRate(budget: 0, bytesPerSecond: 10_000_000)])
        #expect(Self.rates(machine.tick(now: at(0.05))).isEmpty, "nothing changed: no RATE again")
    }

    @Test func aChangedLimitIsSentAgainAtTheNextTick() {
        var (machine, peers, _, _) = Self.machine(slots: [2, 2], bytes: 40_000_000, tasks: 4)
        _ = machine.tick(now: at(0.05))
        machine.setBudget(id: 0, name: "UploadFileOp", rates: FlowLimitRates(bytesPerSecond: 8_000_000), maxConcurrent: 1000, adaptive: false,
                          now: at(1))
        let rates = Self.rates(machine.tick(now: at(1.05)))
        #expect(rates[peers[0]] == [WireRate(budget: 0, bytesPerSecond: 4_000_000)])
        #expect(rates[peers[1]] == [WireRate(budget: 0, bytesPerSecond: 4_000_000)])
        // `limit … off`: no bytes limit is sent as 0.
        machine.setBudget(id: 0, name: "UploadFileOp", rates: FlowLimitRates(), maxConcurrent: 1000, adaptive: false, now: at(2))
        #expect(Self.rates(machine.tick(now: at(2.05)))[peers[0]] == [WireRate(budget: 0, bytesPerSecond: 0)])
    }

    @Test func sharesFollowTheTasksAsTheyEnd() {
        var (machine, peers, sent, _) = Self.machine(slots: [2, 2], bytes: 40_000_000, tasks: 4)
        _ = machine.tick(now: at(0.05))
        // Both of w2's tasks end: w1 alone runs the group, and gets it all.
        var onW2: [UInt64] = []
        for case .task(let tasks) in sent { onW2 += tasks.map(\.taskID) }
        let w2Tasks = machine.workers[peers[1]]!.inFlight.sorted()
        let results = w2Tasks.map { WireResult(taskID: $0, attempt: 1, finishState: .successfully, startedAt: Date(), finishedAt: Date(),
                                               elementIndex: Int($0), output: .integer(1)) }
        _ = machine.receive(.result(results), from: peers[1], now: at(0.5))
        let rates = Self.rates(machine.tick(now: at(0.55)))
        #expect(rates[peers[0]] == [WireRate(budget: 0, bytesPerSecond: 40_000_000)])
        #expect(rates[peers[1]] == nil, "a worker with none of the group's tasks hears nothing")
    }

    @Test func aWorkerWithoutTheFeatureGetsNoBudgetAndNoRate() {
        let (_, peers, sent, rates) = Self.machine(slots: [2, 2], features: [WireReady.Feature.progress, 0], bytes: 40_000_000, tasks: 4)
        var budgets: [UInt64?] = []
        for case .task(let tasks) in sent { budgets += tasks.map(\.budget) }
        #expect(budgets.filter { $0 == nil }.count == 2, "the old worker's TASK has no flags bit 3")
        #expect(rates[peers[1]] == nil)
        #expect(rates[peers[0]] == [WireRate(budget: 0, bytesPerSecond: 40_000_000)], "the budget goes to the workers that hold it")
    }

    @Test func anUnlimitedRunSendsNoRateAndTasksCarryNoBudget() {
        var machine = Machine(configuration: .init(liveness: 1000, workerTimeout: .seconds(600)))
        let peer = Data("w1".utf8)
        _ = machine.receive(Self.ready("w1", slots: 4), from: peer, now: at(0))
        for id: UInt64 in 1...4 { machine.submit(Self.element(id), waiter: id) }
        var budgets: [UInt64?] = []
        for case .send(_, .task(let tasks)) in machine.dispatch(now: at(0)) { budgets += tasks.map(\.budget) }
        #expect(budgets == [nil, nil, nil, nil])
        #expect(Self.rates(machine.tick(now: at(0.05))).isEmpty)
    }

    @Test func progressCountsTowardItsBudgetOnlyFromTheWorkerAndAttemptThatRunIt() {
        var (machine, peers, _, _) = Self.machine(slots: [2, 2], bytes: 40_000_000, tasks: 4)
        let onW1 = machine.workers[peers[0]]!.inFlight.sorted()
        let onW2 = machine.workers[peers[1]]!.inFlight.sorted()
        _ = machine.receive(.progress([WireProgress(taskID: onW1[0], attempt: 1, bytes: 1000),
                                       WireProgress(taskID: onW1[1], attempt: 1, bytes: 24)]), from: peers[0], now: at(0.2))
        // Another worker's task, another attempt, a task nobody has: ignored, never answered.
        let ignored = machine.receive(.progress([WireProgress(taskID: onW2[0], attempt: 1, bytes: 5),
                                                 WireProgress(taskID: onW1[0], attempt: 2, bytes: 5),
                                                 WireProgress(taskID: 999, attempt: 1, bytes: 5)]), from: peers[0], now: at(0.3))
        #expect(ignored.isEmpty)
        #expect(machine.budgetStatuses.first?.bytesSent == 1024)
    }

    @Test func aWorkerSendingRateIsUnexpectedAndAnUnknownOnesProgressIsToldToRegister() {
        var (machine, peers, _, _) = Self.machine(slots: [1], bytes: 1000, tasks: 1)
        let actions = machine.receive(.rate([WireRate(budget: 0, bytesPerSecond: 1)]), from: peers[0], now: at(0.1))
        #expect(actions.contains { if case .report(.unexpectedMessage) = $0 { true } else { false } })
        let stranger = machine.receive(.progress([WireProgress(taskID: 1, attempt: 1, bytes: 1)]), from: Data("x".utf8), now: at(0.1))
        #expect(stranger.contains { if case .send(_, .disconnect) = $0 { true } else { false } })
    }

    /// The worker's bucket: chunks of 1 MiB taken as fast as it lets them go, for 30 s at
    /// 10 MiB/s: every 10 s window after the first second within 2%.
    @Test func theByteBucketHoldsItsRateOverEveryTenSecondWindow() {
        let rate = 10.0 * 1_048_576
        var bucket = ByteTokenBucket(rate: rate, now: at(0))
        var sends: [Double] = []
        var now = 0.0
        while now < 30 {
            let ticket = bucket.take(1_048_576, now: at(now))
            let wait = bucket.wait(for: ticket, now: at(now))
            now += Double(wait.components.seconds) + Double(wait.components.attoseconds) * 1e-18
            sends.append(now)
        }
        for from in stride(from: 1.0, through: 19.0, by: 0.5) {
            let bytes = Double(sends.filter { $0 >= from && $0 < from + 10 }.count) * 1_048_576
            #expect(abs(bytes / 10 - rate) / rate <= 0.02, "window from \(from) s: \(bytes / 10) B/s")
        }
    }

    @Test func aLowerByteRateTakesEffectForTheDebtToCome() {
        var bucket = ByteTokenBucket(rate: 1_000_000, now: at(0))
        let first = bucket.take(1_100_000, now: at(0))
        #expect(bucket.wait(for: first, now: at(0)) == .zero, "a full bucket lets the first chunk go")
        let second = bucket.take(100, now: at(0))
        #expect(bucket.wait(for: second, now: at(0)) == .seconds(1))
        bucket.setRate(100_000, now: at(0.5))
        // 0.5 s paid 500,000 of the 1,000,000 still owed before it; the rest at the new rate.
        #expect(bucket.wait(for: second, now: at(0.5)) == .seconds(5))
    }

    /// A clock that moves only when a wait sleeps on it, by what it sleeps; it keeps the sleeps.
    final class ManualTime: Sendable {
        private let state = Mutex((offset: Duration.zero, sleeps: [Duration]()))
        let base = ContinuousClock.now

        var sleeps: [Duration] { state.withLock { $0.sleeps } }

        var timekeeper: WorkerByteBudgets.Timekeeper {
            WorkerByteBudgets.Timekeeper(now: { self.base + self.state.withLock { $0.offset } }, sleep: { duration in
                self.state.withLock { $0.offset += duration; $0.sleeps.append(duration) }
            })
        }
    }

    @Test func theWorkerReportsBytesPerTaskAtMostEveryInterval() async throws {
        let time = ManualTime()
        let budgets = WorkerByteBudgets(reportInterval: .milliseconds(200), firstRateWait: .milliseconds(50), time: time.timekeeper)
        budgets.set([WireRate(budget: 0, bytesPerSecond: 0)])
        let task = WireTaskReference(taskID: 7, attempt: 1)
        try await budgets.sent(1000, task: task, budget: 0)
        try await budgets.sent(24, task: task, budget: 0)
        let now = ContinuousClock.now
        #expect(budgets.takeProgress(now: now) == [WireProgress(taskID: 7, attempt: 1, bytes: 1024)])
        try await budgets.sent(1, task: task, budget: 0)
        #expect(budgets.takeProgress(now: now + .milliseconds(100)) == nil, "within the interval")
        #expect(budgets.takeProgress(now: now + .milliseconds(200)) == [WireProgress(taskID: 7, attempt: 1, bytes: 1)])
        // A budget no RATE named: waits of 20 ms until the first RATE's wait of 50 ms has passed, then no limit.
        #expect(time.sleeps.isEmpty)
        try await budgets.sent(1_000_000_000, task: task, budget: 9)
        #expect(time.sleeps == [.milliseconds(20), .milliseconds(20), .milliseconds(20)])
        // The wait counts once per budget (§15.2): the next chunk of it goes at once, unlimited.
        try await budgets.sent(1_000_000_000, task: task, budget: 9)
        #expect(time.sleeps.count == 3, "\(time.sleeps)")
        // A RATE for it: the next gigabyte waits on its bucket, in slices of at most 100 ms.
        budgets.set([WireRate(budget: 9, bytesPerSecond: 1_000_000_000)], now: time.timekeeper.now())
        try await budgets.sent(1_000_000_000, task: task, budget: 9)
        try await budgets.sent(500_000_000, task: task, budget: 9)
        let waited = time.sleeps.dropFirst(3)
        #expect(waited.allSatisfy { $0 <= .milliseconds(100) } && waited.reduce(.zero, +) >= .milliseconds(500), "\(waited)")
    }

    /// A malformed PROGRESS is dropped as any malformed message (§9.1): reported, never answered.
    @Test func aMalformedProgressIsAReportedEventAndNoAnswer() {
        var traffic = MalformedTraffic(heartbeatInterval: .seconds(1))
        let frames = [WireCodec.protocolFrame, Data([0x09]), Data([0x01, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0x00])]
        do {
            _ = try WireCodec.decode(frames)
            Issue.record("a PROGRESS of 0 bytes decoded")
        } catch {
            var replies = 0
            let event = traffic.handle(error, frames: frames, from: Data("p".utf8), name: "w1", now: at(0)) { _ in replies += 1 }
            guard case .malformedMessage(let peer, let reason)? = event else {
                Issue.record("expected a malformed-message event, got \(String(describing: event))")
                return
            }
            #expect(peer == "w1" && reason.contains("bytes"), "\(reason)")
            #expect(replies == 0)
        }
    }
}
