import Foundation
import ZeroMQ

/// Names the peer of each failed CURVE handshake, from the coordinator's monitor events, and
/// says which failures to log: once per peer address, as ZAP refusals are once per address and
/// key.
///
/// libzmq's events name the coordinator's own listening address, never the peer's (a failed
/// handshake never reaches the ZAP handler, which does learn it): logged as it was, every
/// failure read `refused a peer at` the coordinator, and logging each address once hid every
/// later bad peer. So the peer is read from the connection itself when it is accepted
/// (``ZMQMonitorEvent/acceptedPeer()``), and a failure is matched with the connection it ends: libzmq
/// sends the failure, then the end of that connection (`DISCONNECTED`, with its descriptor).
///
/// Reading the peer is a race with libzmq, which may close the connection (and reuse its
/// descriptor) before the event is read. libzmq sends a connection's end before it closes the
/// descriptor, so an address is only believed when that end was not among the events already
/// read when it was looked up; a failure whose peer is not known is logged without an address,
/// at most once a minute. (What is left: a descriptor closed and given to a new connection in
/// the microseconds between reading the events and looking it up.)
struct HandshakeFailureLog {
    typealias Instant = ContinuousClock.Instant

    private struct Peer: Equatable {
        var address: String
        var port: UInt16
    }

    /// The peers of the open connections, by descriptor; `nil` where it could not be read.
    private var peers: [UInt32: Peer?] = [:]
    /// Set by a failure until the end of its connection names which one it was.
    private var failing = false
    private var reported = Set<String>()
    private var lastUnknown: Instant?
    /// How often a failure of an unknown peer is logged.
    let unknownInterval: Duration

    init(unknownInterval: Duration = .seconds(60)) {
        self.unknownInterval = unknownInterval
    }

    /// Takes the events read from the monitor at once, in order, and returns what to log: the
    /// address of each peer whose handshake failed (`nil` where it is not known).
    ///
    /// - Parameter lookup: reads an accepted connection's peer (``ZMQMonitorEvent/acceptedPeer()``).
    mutating func take(_ events: [ZMQMonitorEvent], now: Instant,
                       lookup: (ZMQMonitorEvent) -> (address: String, port: UInt16)?) -> [String?] {
        var reports: [String?] = []
        for (index, event) in events.enumerated() {
            if event.event == .accepted {
                // Ended already among these events: the descriptor may be closed, or another's.
                let endsHere = events[(index + 1)...].contains { $0.event == .disconnected && $0.value == event.value }
                peers[event.value] = .some(endsHere ? nil : lookup(event).map { Peer(address: $0.address, port: $0.port) })
            } else if event.event == .disconnected {
                let peer = peers.removeValue(forKey: event.value) ?? nil
                guard failing else { continue }
                failing = false
                if let peer {
                    if reported.insert(peer.address).inserted { reports.append(peer.address) }
                } else if lastUnknown.map({ now - $0 >= unknownInterval }) ?? true {
                    lastUnknown = now
                    reports.append(nil)
                }
            } else if event.event == .handshakeFailedProtocol || event.event == .handshakeFailedNoDetail {
                failing = true
            }
        }
        // Bounded: a flood of connections cannot grow these without limit.
        if peers.count > 65_536 { peers.removeAll(keepingCapacity: true) }
        if reported.count > 4_096 { reported.removeAll(keepingCapacity: true) }
        return reports
    }
}
