import FlowWire
import Foundation
import Testing
@testable import FlowCluster

/// §9.1 without sockets: a burst of malformed messages leaves, for each peer and kind of fault,
/// its first line at once and the count of the rest once the interval has passed, also when no
/// message of that kind follows (an independent worker's burst of 16 once left 6 unsaid).
@Suite struct MalformedTrafficTests {
    static let t0 = ContinuousClock.now

    /// Garbage of three kinds: a missing command frame, an unknown command, a truncated body.
    static let garbage: [[Data]] = [
        [WireCodec.protocolFrame],
        [WireCodec.protocolFrame, Data([0x7F]), Data()],
        [WireCodec.protocolFrame, Data([0x09]), Data([0x01])],
    ]

    static func error(_ frames: [Data]) throws -> WireDecodingError {
        do {
            _ = try WireCodec.decode(frames)
        } catch {
            return error
        }
        throw DecodedAfterAll(frames: frames)
    }

    /// Garbage that decoded: the test's frames are not what it thinks.
    struct DecodedAfterAll: Error {
        let frames: [Data]
    }

    /// The count a line says: 1 for a first line, N for `N more malformed messages`, plus
    /// `and N more since the last report` where a line carries it.
    static func count(_ event: ClusterEvent) -> Int {
        guard case .malformedMessage(_, let reason) = event else { return 0 }
        if let held = reason.firstMatch(of: /^(\d+) more malformed message/) { return Int(held.1) ?? 0 }
        let more = reason.firstMatch(of: /and (\d+) more since the last report/).flatMap { Int($0.1) } ?? 0
        return 1 + more
    }

    @Test func everyMessageOfABurstIsSaidOrCounted() throws {
        var traffic = MalformedTraffic(heartbeatInterval: .seconds(1))
        let peer = Data("worker".utf8)
        var events: [ClusterEvent] = []
        for index in 0..<16 {
            let frames = Self.garbage[index % Self.garbage.count]
            let error = try Self.error(frames)
            if let event = traffic.handle(error, frames: frames, from: peer, name: "w1", now: Self.t0 + .milliseconds(index), reply: { _ in }) {
                events.append(event)
            }
        }
        #expect(events.count == 3, "one line at once for each kind: \(events)")
        #expect(traffic.heldBack(now: Self.t0 + .milliseconds(500)).isEmpty, "within the interval, nothing more")
        let later = traffic.heldBack(now: Self.t0 + .seconds(2))
        #expect(later.count == 3, "\(later)")
        #expect((events + later).map(Self.count).reduce(0, +) == 16, "\(events + later)")
        #expect(later.allSatisfy { if case .malformedMessage(let name, _) = $0 { name == "w1" } else { false } })
        #expect(traffic.heldBack(now: Self.t0 + .seconds(4)).isEmpty, "each count is said once")
    }

    @Test func aReadyPastTheLimitsIsSaidOnceAMinuteWithItsCount() throws {
        var traffic = MalformedTraffic(heartbeatInterval: .seconds(1))
        let ready = WireCodec.encode(.ready(WireReady(workerName: String(repeating: "n", count: 100_000), slotCount: 1, ops: ["SleepOp"],
                                                      hostname: "h", processID: 1)))
        let error = try Self.error(ready)
        #expect(error.code == .overLimit)
        var said = 0
        for index in 0..<5 {
            if traffic.handle(error, frames: ready, from: Data("p".utf8), name: "p", now: Self.t0 + .seconds(index), reply: { _ in }) != nil { said += 1 }
        }
        #expect(said == 1)
        #expect(traffic.heldBack(now: Self.t0 + .seconds(30)).isEmpty)
        let later = traffic.heldBack(now: Self.t0 + .seconds(61))
        #expect(later.map(Self.count) == [4], "\(later)")
    }
}
