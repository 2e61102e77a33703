import FlowWire
import Foundation
import ZeroMQ

/// What the coordinator's and the pool's I/O loops do with a message they cannot decode (§9): it is
/// logged at most once a second per peer and kind of fault, a READY past the limits (§7.1) once a
/// minute per peer, and the lines held back are counted and said (``heldBack(now:)``, from the
/// loop's tick) once their interval has passed, also when no message of that kind follows. A peer
/// of another protocol version (§9.3) is answered, in that version, with a DISCONNECT naming both
/// versions, and logged at most once a minute.
struct MalformedTraffic {
    private var log = RateLimiter(interval: .seconds(1))
    private var overLimit = RateLimiter(interval: .seconds(60))
    /// The peer's name and the fault's kind of each key of ``log`` and ``overLimit``, for the count.
    private var keys: [Data: (name: String, kind: String)] = [:]
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
        let kind = String(describing: error.code)
        let key = peer + Data(kind.utf8)
        if keys.count >= 4_096 { keys.removeAll(keepingCapacity: true) }
        keys[key] = (name, kind)
        // A READY past the name and op limits (§7.1) is said once a minute per peer: whatever it
        // says again is the same, and its text is what is too big to repeat.
        // §9.1: anything else at most once a second per peer and kind of fault, with how many were
        // not; so a burst of garbage cannot hide another version's message (§9.3).
        let suppressed = error.code == .overLimit ? overLimit.admit(key, now: now) : log.admit(key, now: now)
        guard let suppressed else { return nil }
        let more = suppressed > 0 ? " (and \(suppressed) more since the last report)" : ""
        return .malformedMessage(peer: name, reason: String(describing: error) + more)
    }

    /// The counts of malformed messages held back whose interval has passed: one event per peer
    /// and kind of fault, `N more malformed messages (KIND) since the last report`.
    mutating func heldBack(now: ContinuousClock.Instant) -> [ClusterEvent] {
        (log.heldBack(now: now) + overLimit.heldBack(now: now)).compactMap { key, held in
            guard let said = keys[key] else { return nil }
            return .malformedMessage(peer: said.name, reason: "\(held) more malformed message\(held == 1 ? "" : "s") (\(said.kind)) "
                                     + "since the last report")
        }
    }
}
