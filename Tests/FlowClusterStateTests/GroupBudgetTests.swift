import Flow
import FlowWire
import Foundation
import Testing
@testable import FlowCluster

private let t0 = ContinuousClock.now
private func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .microseconds(Int64(seconds * 1_000_000)) }

/// The requests budget, the adaptive concurrency and their place in dispatch, on a manual clock.
@Suite struct GroupBudgetTests {
    /// Starts taken as fast as they come, polled every millisecond for 30 s: each 10 s window
    /// after the first second holds the rate within 1%.
    @Test func theTokenBucketHoldsItsRateOverEveryTenSecondWindow() {
        var bucket = RequestTokenBucket(rate: 500)
        var starts: [Double] = []
        for step in 0..<30_000 {
            let now = Double(step) / 1000
            while bucket.take(now: at(now)) { starts.append(now) }
        }
        for from in stride(from: 1.0, through: 20.0, by: 0.5) {
            let inWindow = starts.filter { $0 >= from && $0 < from + 10 }.count
            #expect(abs(Double(inWindow) - 5000) <= 50, "window from \(from) s: \(inWindow)")
        }
    }

    /// After an idle minute a bucket gives at most a twentieth of a second's starts at once.
    @Test func anIdleBucketKeepsOnlyASmallBurst() {
        var bucket = RequestTokenBucket(rate: 3000)
        _ = bucket.take(now: at(0))
        var burst = 0
        while bucket.take(now: at(60)) { burst += 1 }
        #expect(burst == 150)
        #expect(bucket.nextToken(now: at(60)) > at(60))
        #expect(bucket.nextToken(now: at(60)) <= at(60.001))
    }

    @Test func aLowerRateTakesEffectAtOnce() {
        var bucket = RequestTokenBucket(rate: 1000)
        var count = 0
        for step in 0..<1000 { while bucket.take(now: at(Double(step) / 1000)) { count += 1 } }
        bucket.setRate(10, now: at(1))
        var later = 0
        for step in 1000..<3000 { while bucket.take(now: at(Double(step) / 1000)) { later += 1 } }
        #expect(count >= 990 && count <= 1010)
        #expect(later >= 19 && later <= 22)
    }

    /// Throttled answers halve the concurrency at most once a window; a window's worth of good
    /// answers adds one; it never passes `maxConcurrent` and never falls below 1.
    @Test func adaptiveConcurrencyCutsByHalfAndGrowsByOne() {
        var adaptive = AdaptiveConcurrency(maximum: 64, window: .seconds(1), cutWindow: .seconds(1))
        do { let changed = adaptive.throttled(now: at(0)); #expect(changed) }
        #expect(adaptive.current == 32)
        do { let changed = adaptive.throttled(now: at(0.5)); #expect(!changed, "a second cut within the window") }
        #expect(adaptive.current == 32)
        do { let changed = adaptive.throttled(now: at(1.0)); #expect(changed) }
        #expect(adaptive.current == 16)
        for _ in 0..<15 { let grew = adaptive.answered(now: at(2)); #expect(!grew) }
        do { let changed = adaptive.answered(now: at(2)); #expect(changed) }
        #expect(adaptive.current == 17)
        for step in 0..<10_000 { _ = adaptive.answered(now: at(3 + Double(step) / 1000)) }
        #expect(adaptive.current == 64)
        #expect(adaptive.lowest == 16)
        for step in 0..<20 { _ = adaptive.throttled(now: at(20 + Double(step))) }
        #expect(adaptive.current == 1)
    }

    /// Good answers right after a cut (tasks sent before it) do not grow it back at once.
    @Test func noGrowthWithinTheWindowAfterACut() {
        var adaptive = AdaptiveConcurrency(maximum: 8, window: .seconds(1))
        _ = adaptive.throttled(now: at(0))
        for _ in 0..<100 { let grew = adaptive.answered(now: at(0.9)); #expect(!grew) }
        #expect(adaptive.current == 4)
    }

    /// Starting 1000 a second, a throttled answer holds the group to 700; a second cut within the
    /// period does nothing; each good second adds 25; past 1000 the back-off ends.
    @Test func adaptiveRateHalvesTheObservedRateAndGrowsBack() {
        var rate = AdaptiveRate(period: .seconds(1), cutPeriod: .seconds(1))
        for step in 0..<2000 { rate.started(now: at(Double(step) / 1000)) }
        do { let cut = rate.throttled(now: at(2)); #expect(cut) }
        #expect(abs((rate.rate ?? 0) - 700) < 7)
        do { let cut = rate.throttled(now: at(2.5)); #expect(!cut) }
        do { let grew = rate.answered(now: at(2.5)); #expect(!grew) }
        do { let grew = rate.answered(now: at(3)); #expect(grew) }
        #expect(abs((rate.rate ?? 0) - 725) < 7)
        var now = 3.0
        while rate.rate != nil, now < 30 {
            now += 1
            _ = rate.answered(now: at(now))
        }
        #expect(rate.rate == nil)
        #expect(now >= 14 && now <= 16)
    }

    @Test func throttlingAnswersAreRecognised() {
        func failed(_ text: String, retryAfter: UInt64 = 0) -> WireResult {
            WireResult(taskID: 1, attempt: 1, finishState: .withError(text), startedAt: Date(), finishedAt: Date(),
                       retryAfterMilliseconds: retryAfter)
        }
        #expect(ThrottleSignal.isThrottle(failed("PUT http://x/a: HTTP 503")))
        #expect(ThrottleSignal.isThrottle(failed("PUT http://x/a: HTTP 429")))
        #expect(ThrottleSignal.isThrottle(failed("S3 SlowDown: Please reduce your request rate.")))
        #expect(ThrottleSignal.isThrottle(failed("refused", retryAfter: 2000)))
        #expect(!ThrottleSignal.isThrottle(failed("PUT http://x/a: HTTP 500")))
        #expect(!ThrottleSignal.isThrottle(failed("PUT http://x/a: HTTP 403")))
        #expect(!ThrottleSignal.isThrottle(WireResult(taskID: 1, attempt: 1, finishState: .successfully, startedAt: Date(),
                                                      finishedAt: Date())))
    }

    // MARK: In dispatch

    typealias Machine = DispatchCore<UInt64>

    private static func ready(_ name: String, slots: UInt32) -> WireMessage {
        .ready(WireReady(workerName: name, features: 0, slotCount: slots, ops: ["EchoOp"], hostname: "test", processID: 1,
                         heartbeatIntervalMilliseconds: 60_000))
    }

    /// Drives a machine with three workers of 64 slots for `seconds`: tasks are always waiting,
    /// and each worker answers everything it was sent 1 ms later. Returns the send time of every
    /// task.
    ///
    /// Tens of thousands of turns, so it runs on a thread of its own: on the cooperative pool
    /// (two threads on a 2-core machine) it held a thread for most of a minute of a debug main
    /// phase even yielding every hundred turns (19 of 40 thread samples taken with gdb found it
    /// there), and under ThreadSanitizer two of these once kept every other test of the process
    /// from running for 65 s.
    private static func drive(seconds: Double, rates: FlowLimitRates, change: (at: Double, rates: FlowLimitRates)? = nil)
        async -> [Double] {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: driveBlocking(seconds: seconds, rates: rates, change: change)) }
            thread.name = "group-budget-drive"
            thread.start()
        }
    }

    /// ``drive(seconds:rates:change:)``'s turns, on the calling thread.
    private static func driveBlocking(seconds: Double, rates: FlowLimitRates, change: (at: Double, rates: FlowLimitRates)?) -> [Double] {
        var machine = Machine(configuration: .init(liveness: 1000, workerTimeout: .seconds(600)))
        let peers = (1...3).map { Data("w\($0)".utf8) }
        for (index, peer) in peers.enumerated() { _ = machine.receive(ready("w\(index)", slots: 64), from: peer, now: at(0)) }
        machine.setBudget(id: 0, name: "EchoOp", rates: rates, maxConcurrent: 1000, adaptive: true, now: at(0))
        var next: UInt64 = 1
        var sentAt: [Double] = []
        var pending: [Data: [UInt64]] = [:]
        var now = 0.0
        var changed = false
        while now < seconds {
            if let change, !changed, now >= change.at {
                machine.setBudget(id: 0, name: "EchoOp", rates: change.rates, maxConcurrent: 1000, adaptive: true, now: at(now))
                changed = true
            }
            for (peer, ids) in pending where !ids.isEmpty {
                let results = ids.map { WireResult(taskID: $0, attempt: 1, finishState: .successfully, startedAt: Date(), finishedAt: Date(),
                                                   elementIndex: Int($0), output: .integer(1)) }
                _ = machine.receive(.result(results), from: peer, now: at(now))
            }
            pending = [:]
            while machine.queue.count < 200 {
                machine.submit(WireTask(taskID: next, op: "EchoOp", groupElement: .integer(1), elementIndex: Int(next)), waiter: next, budget: 0)
                next += 1
            }
            machine.expectedSubmissions = 0
            for case .send(let peer, .task(let tasks)) in machine.dispatch(now: at(now)) {
                pending[peer, default: []] += tasks.map(\.taskID)
                sentAt += tasks.map { _ in now }
            }
            // The next turn: at the budget's wake-up, or a millisecond on when answers are due.
            let wake = machine.nextDeadline.map { Double(($0 - t0).components.attoseconds) * 1e-18 + Double(($0 - t0).components.seconds) }
            now = pending.isEmpty ? max(now + 0.0001, wake ?? now + 0.001) : now + 0.001
        }
        return sentAt
    }

    /// Across three workers with room for 192 at once, a group of 500 a second starts 500 ± 10%
    /// a second in every 10 s window: tasks sent into workers' queues count as started.
    @Test func dispatchHoldsTheRequestsRateAcrossWorkers() async {
        let sentAt = await Self.drive(seconds: 25, rates: FlowLimitRates(requestsPerSecond: 500))
        for from in stride(from: 1.0, through: 15.0, by: 1) {
            let count = sentAt.filter { $0 >= from && $0 < from + 10 }.count
            #expect(abs(count - 5000) <= 500, "window from \(from) s: \(count)")
        }
        #expect(sentAt.count > 12_000 && sentAt.count < 13_000)
    }

    /// A new rate (`limit` from another terminal) holds from the moment it is set.
    @Test func aChangedRateTakesEffectInDispatch() async {
        let sentAt = await Self.drive(seconds: 20, rates: FlowLimitRates(requestsPerSecond: 1000),
                                change: (at: 10, rates: FlowLimitRates(requestsPerSecond: 100)))
        let before = sentAt.filter { $0 < 10 }.count
        let after = sentAt.filter { $0 >= 10.001 }.count
        #expect(before >= 9_900 && before <= 10_100)
        #expect(after >= 950 && after <= 1_100)
    }

    /// Without a rate, a group with a budget (adaptive only) goes as fast as the workers answer.
    @Test func anUnlimitedBudgetDoesNotHoldTasksBack() async {
        let sentAt = await Self.drive(seconds: 1, rates: FlowLimitRates())
        #expect(sentAt.count > 50_000)
    }

    /// A throttled answer halves what the group runs at once; it is reported, and so is the way
    /// back to `maxConcurrent`.
    @Test func aThrottledAnswerLowersTheGroupsConcurrency() {
        var machine = Machine(configuration: .init(liveness: 1000, workerTimeout: .seconds(600)))
        let peer = Data("w".utf8)
        _ = machine.receive(Self.ready("w", slots: 64), from: peer, now: at(0))
        machine.setBudget(id: 0, name: "EchoOp at f.yaml:3:5", rates: FlowLimitRates(), maxConcurrent: 8, adaptive: true, now: at(0))
        for id: UInt64 in 1...100 {
            machine.submit(WireTask(taskID: id, op: "EchoOp", groupElement: .integer(1), elementIndex: Int(id)), waiter: id, budget: 0)
        }
        func send(_ now: Double) -> [UInt64] {
            machine.expectedSubmissions = 0
            return machine.dispatch(now: at(now)).flatMap { action -> [UInt64] in
                if case .send(_, .task(let tasks)) = action { return tasks.map(\.taskID) } else { return [] }
            }
        }
        // maxConcurrent is the engine's; the machine's queue holds the rest here, so the first
        // turn sends everything: the budget holds nothing back while not throttled.
        let first = send(0)
        #expect(first.count == 64)
        let throttled = WireResult(taskID: first[0], attempt: 1, finishState: .withError("PUT: HTTP 503 SlowDown"),
                                   startedAt: Date(), finishedAt: Date(), elementIndex: Int(first[0]))
        let actions = machine.receive(.result([throttled]), from: peer, now: at(0.1))
        #expect(actions.contains { if case .report(.throttled("EchoOp at f.yaml:3:5", 4, 8, _)) = $0 { true } else { false } })
        #expect(machine.budgets[0].snapshot.concurrency == 4)
        // 63 still run: nothing more goes until fewer than 4 do.
        #expect(send(0.2).isEmpty)
        var running = Array(first.dropFirst())
        var reported: [ClusterEvent] = []
        var now = 1.5
        while !running.isEmpty {
            let id = running.removeFirst()
            let good = WireResult(taskID: id, attempt: 1, finishState: .successfully, startedAt: Date(), finishedAt: Date(),
                                  elementIndex: Int(id), output: .integer(1))
            for case .report(let event) in machine.receive(.result([good]), from: peer, now: at(now)) { reported.append(event) }
            running += send(now)
            #expect(machine.budgets[0].running <= max(4, machine.budgets[0].snapshot.concurrency ?? 0) || running.count > 8)
            now += 0.01
        }
        #expect(reported.contains(.unthrottled(step: "EchoOp at f.yaml:3:5", maxConcurrent: 8)))
        #expect(machine.budgets[0].snapshot.lowestConcurrency == 4)
    }
}
