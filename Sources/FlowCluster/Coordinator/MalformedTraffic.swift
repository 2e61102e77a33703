import FlowWire
import Foundation
import ZeroMQ

/// What the coordinator's I/O loop does with a message it cannot decode (§9): it logs it at most
/// once a second per peer and kind of fault, a READY past the limits (§7.1) once per peer, and a
/// peer of another protocol version (§9.3) it answers, in that version, with a DISCONNECT naming
/// both versions, and logs at most once a minute.
struct MalformedTraffic {
    private var log = RateLimiter(interval: .seconds(1))
    private var overLimitPeers = Set<Data>()
    private var versionReplies: RateLimiter
    private var versionLog = RateLimiter(interval: .seconds(60))

    /// - Parameter heartbeatInterval: the least time between two answers to one peer of another
    ///   version.
    init(heartbeatInterval: Duration) {
        versionReplies = RateLimiter(interval: heartbeatInterval)
    }

    /// The DISCONNECT reason, and log text, for a peer that speaks `version`.
    static func otherVersionReason(_ version: String) -> String {
        "unsupported protocol version \(version), this coordinator speaks \(WireLimits.protocolVersion)"
    }

    /// Handles a message that failed to decode with `error`.
    ///
    /// - Parameters:
    ///   - frames: the message's frames after the peer's routing id.
    ///   - name: the peer as log lines name it.
    ///   - reply: sends frames (routing id first) to the peer, for the answer to another version.
    /// - Returns: the event to report, `nil` when it is held back.
    mutating func handle(_ error: WireDecodingError, frames: [Data], from peer: Data, name: String, now: ContinuousClock.Instant,
                         reply: ([Data]) -> Void) -> ClusterEvent? {
        if error.code == .unsupportedVersion, let version = frames.first.flatMap(WireLimits.version(ofSignature:)) {
            let reason = Self.otherVersionReason(version)
            if versionReplies.admit(peer, now: now) != nil {
                // DISCONNECT's body is the same in every version: the peer reads it in its own.
                var disconnect = WireCodec.encode(.disconnect(reason: reason))
                disconnect[0] = Data(version.utf8)
                reply([peer] + disconnect)
            }
            guard versionLog.admit(peer, now: now) != nil else { return nil }
            return .otherVersion(peer: name, version: version)
        }
        // A READY past the name and op limits (§7.1) is refused once per peer: whatever it says
        // again is the same, and its text is what is too big to repeat.
        if error.code == .overLimit {
            // Bounded as the rate limiter is: fresh connections cannot grow it forever.
            if overLimitPeers.count >= 4_096 { overLimitPeers.removeAll(keepingCapacity: true) }
            guard overLimitPeers.insert(peer).inserted else { return nil }
        }
        // §9.1: logged at most once a second per peer and kind of fault, with how many were not;
        // so a burst of garbage cannot hide another version's message (§9.3).
        guard let suppressed = log.admit(peer + Data(String(describing: error.code).utf8), now: now) else { return nil }
        let more = suppressed > 0 ? " (and \(suppressed) more since the last report)" : ""
        return .malformedMessage(peer: name, reason: String(describing: error) + more)
    }
}
