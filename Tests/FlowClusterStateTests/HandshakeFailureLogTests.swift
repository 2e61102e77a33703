import Foundation
import Testing
import ZeroMQ
@testable import FlowCluster

/// Which peer a failed handshake was, from monitor events alone: no sockets.
@Suite struct HandshakeFailureLogTests {
    private let t0 = ContinuousClock.now

    private func event(_ kind: ZMQMonitorEvents, _ value: UInt32) -> ZMQMonitorEvent {
        var head = [UInt8](repeating: 0, count: 6)
        head[0] = UInt8(kind.rawValue & 0xFF)
        head[1] = UInt8(kind.rawValue >> 8 & 0xFF)
        for index in 0..<4 { head[2 + index] = UInt8(value >> (8 * UInt32(index)) & 0xFF) }
        // libzmq names the listening side, never the peer.
        return ZMQMonitorEvent(frames: [Data(head), Data("tcp://10.88.0.1:5555".utf8)])!
    }

    private func failure(_ fd: UInt32) -> [ZMQMonitorEvent] {
        [event(.handshakeFailedProtocol, 0x11000001), event(.disconnected, fd)]
    }

    @Test func eachFailedPeerIsNamedByItsOwnAddressOnceEach() {
        var log = HandshakeFailureLog()
        let peers: [UInt32: String] = [12: "192.0.2.7", 13: "192.0.2.8"]
        let lookup: (ZMQMonitorEvent) -> (address: String, port: UInt16)? = { peers[$0.value].map { ($0, 40_000) } }
        #expect(log.take([event(.accepted, 12)], now: t0, lookup: lookup) == [])
        #expect(log.take(failure(12), now: t0, lookup: lookup) == ["192.0.2.7"])
        // The same peer again: once per address. Another peer: logged too.
        #expect(log.take([event(.accepted, 12)] , now: t0, lookup: lookup) == [])
        #expect(log.take(failure(12), now: t0, lookup: lookup) == [])
        #expect(log.take([event(.accepted, 13)], now: t0, lookup: lookup) == [])
        #expect(log.take(failure(13), now: t0, lookup: lookup) == ["192.0.2.8"])
        // A worker that just leaves is no failure.
        #expect(log.take([event(.accepted, 14), event(.disconnected, 14)], now: t0, lookup: { _ in ("192.0.2.9", 1) }) == [])
    }

    /// A connection that ended among the events read with its start may have its descriptor
    /// closed or reused: its peer is not looked up, and the failure is logged without an
    /// address, at most once a minute.
    @Test func aConnectionGoneBeforeItsPeerWasReadIsLoggedWithoutAnAddressAtMostOnceAMinute() {
        var log = HandshakeFailureLog()
        var lookedUp = 0
        let lookup: (ZMQMonitorEvent) -> (address: String, port: UInt16)? = { _ in lookedUp += 1; return ("198.51.100.1", 1) }
        #expect(log.take([event(.accepted, 20)] + failure(20), now: t0, lookup: lookup) == [nil])
        #expect(lookedUp == 0, "a descriptor already closed is not asked")
        #expect(log.take([event(.accepted, 20)] + failure(20), now: t0 + .seconds(30), lookup: lookup) == [])
        #expect(log.take([event(.accepted, 20)] + failure(20), now: t0 + .seconds(61), lookup: lookup) == [nil])
    }
}
