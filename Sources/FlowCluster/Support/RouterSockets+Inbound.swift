import FlowWire
import Foundation
import Logging

extension RouterSockets {
    /// One message the router read, as a shell hands it to its machine (``receiveEach(withKey:logger:role:relaying:admit:_:)``).
    enum Inbound<Admission> {
        /// From a key no longer authorised (taken off its list since the handshake): not decoded.
        case revoked(peer: Data)
        /// Decoded, with what `admit` said of its key.
        case message(peer: Data, Admission, WireMessage)
        /// It could not be decoded: the error and the frames after the routing id (a reply to a
        /// malformed message needs them). A FLOW02 message, however malformed, is a sign of life
        /// (§8.5); another version's, or one that is not FLOW at all, is not.
        case malformed(peer: Data, WireDecodingError, body: [Data], signOfLife: Bool)
    }

    /// Reads what waits at the router, at most 10 000 messages a turn, and hands each to `handle`.
    ///
    /// - Parameters:
    ///   - withKey: read each message's key (with CURVE: its connection's ZAP user id).
    ///   - role: who reads, for the log line of a failed receive (which ends the turn).
    ///   - relaying: decode for a relay (``WireCodec/decode(taking:relaying:)``): a pool's tasks
    ///     and results keep the bytes they came in, which the TASK and DONE then copy.
    ///   - admit: what the key allows, `nil` for nothing (the message is `revoked`).
    func receiveEach<Admission>(withKey: Bool, logger: Logger, role: String, relaying: Bool = false, admit: (_ key: String?) -> Admission?,
                                _ handle: (Inbound<Admission>) -> Void) {
        for _ in 0..<10_000 {
            var frames: [Data]
            let key: String?
            do {
                guard let received = try receive(withKey: withKey) else { break }
                (frames, key) = received
            } catch {
                logger.warning("\(role) receive failed: \(error)")
                break
            }
            guard let peer = frames.first else { continue }
            guard let admission = admit(key) else {
                handle(.revoked(peer: peer))
                continue
            }
            // The frames after the routing id, held nowhere else: decoding takes the body out of
            // them, and a large one is freed once it is copied for reading.
            var body = Array(frames.dropFirst())
            frames = []
            let decoded: WireMessage
            do {
                decoded = try WireCodec.decode(taking: &body, relaying: relaying)
            } catch {
                handle(.malformed(peer: peer, error, body: body, signOfLife: error.code != .unsupportedVersion && error.code != .wrongProtocol))
                continue
            }
            handle(.message(peer: peer, admission, decoded))
        }
    }
}
