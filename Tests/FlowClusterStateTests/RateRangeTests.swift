import Flow
import FlowWire
import Foundation
import Testing
@testable import FlowCluster

private let t0 = ContinuousClock.now
private func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .microseconds(Int64(seconds * 1_000_000)) }

/// Rates past the flow file's range (the library's API, a pool's client, a peer's RATE) never
/// trap the coordinator's or a worker's conversions (issue 46 item 3): `requestsPerSecond: 1e-10`
/// and `1e17` each killed `run` and every `resume` with exit 132.
@Suite struct RateRangeTests {
    typealias Machine = DispatchCore<UInt64>

    /// A machine with one worker that takes RATEs with request entries, a budget of `requests` a
    /// second, and four of its tasks dispatched over a second.
    private static func machine(requests: Double) -> (Machine, [WireRate]) {
        var machine = Machine(configuration: .init(liveness: 1000, workerTimeout: .seconds(600)))
        let ready = WireReady(workerName: "w1", features: WireReady.Feature.progress | WireReady.Feature.requests, slotCount: 4,
                              ops: ["UploadFileOp"], hostname: "test", processID: 1, heartbeatIntervalMilliseconds: 60_000)
        _ = machine.receive(.ready(ready), from: Data("w1".utf8), now: at(0))
        machine.setBudget(id: 0, name: "UploadFileOp", rates: FlowLimitRates(requestsPerSecond: requests), maxConcurrent: 16, adaptive: true,
                          now: at(0))
        for id in UInt64(1)...4 {
            machine.submit(WireTask(taskID: id, op: "UploadFileOp", groupElement: .integer(Int64(id)), elementIndex: Int(id)), waiter: id, budget: 0)
        }
        var entries: [WireRate] = []
        for step in 0...20 {
            for case .send(_, .rate(let rates)) in machine.dispatch(now: at(Double(step) * 0.05)) { entries += rates }
        }
        return (machine, entries)
    }

    @Test func aTinyRequestsRateWaitsAtMostAnHourForItsNextStart() throws {
        let (machine, rates) = Self.machine(requests: 1e-10)
        // One start went (the bucket holds one token); the next is due in 10^10 s, past Int64's
        // nanoseconds: the wake is an hour away instead of a trap.
        #expect(machine.budgets[0].started == 1)
        let wake = try #require(machine.budgetWake)
        #expect(wake - at(1) <= .seconds(3600) && wake - at(1) > .seconds(3000))
        #expect(rates.contains(.requests(budget: 0, perMille: 1)), "the smallest share, sent with the first task: \(rates)")
    }

    @Test func aHugeRequestsRateIsSentAsTheLargestShare() {
        let (_, entries) = Self.machine(requests: 1e17)
        #expect(entries.contains(.requests(budget: 0, perMille: 1 << 63)), "\(entries)")
    }

    @Test func conversionsSaturate() {
        #expect(Machine.perMille(1e300) == .max)
        #expect(Machine.perMille(.infinity) == .max)
        #expect(Machine.perMille(.nan) == 1)
        #expect(Machine.perMille(1e-300) == 1)
        #expect(Machine.perMille(2.5) == 2500)
        #expect(Machine.share(of: .max, count: 3, total: 3) == 1 << 63)
        #expect(Duration.tokenWait(seconds: 1e300) == .seconds(3600))
        #expect(Duration.tokenWait(seconds: .nan) == .seconds(3600))
        #expect(Duration.tokenWait(seconds: -1) == .zero)
        #expect(Duration.tokenWait(seconds: 0.5) == .milliseconds(500))
    }

    @Test func aWorkersBucketAtTheSmallestWireRateWaitsAtMostAnHour() {
        // A RATE of 1 (a thousandth of a request a second, or a byte a second) with terabytes
        // queued before a ticket: 10^21 ns trapped.
        var bucket = ByteTokenBucket(rate: 0.001, now: at(0))
        let ticket = bucket.take(1 << 40, now: at(0))
        let next = bucket.take(1, now: at(0))
        let first = bucket.wait(for: ticket, now: at(0))
        let second = bucket.wait(for: next, now: at(0))
        #expect(first == .zero && second == .seconds(3600))
        var requests = RequestTokenBucket(rate: 1e-300)
        let took = requests.take(now: at(0))
        #expect(took)
        #expect(requests.nextToken(now: at(0)) == at(0) + .seconds(3600))
    }
}
