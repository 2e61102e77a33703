import Flow
import FlowWire
import Foundation
public import ZeroMQ

extension PoolStatus {
    /// Asks the pool at `endpoint` for its status (STATUS, §14.6).
    ///
    /// - Parameters:
    ///   - endpoint: the pool's endpoint, such as `tcp://host:5555`.
    ///   - curve: with a CURVE pool, a key pair it admits (a client's or a worker's) and its public key.
    ///   - timeout: how long to wait for the answer.
    /// - Throws: ``ClusterError/cannotConnect(endpoint:reason:)`` when nothing answers in time, or
    ///   the peer there is not a pool (its DISCONNECT reason is given).
    public static func query(_ endpoint: String, curve: (keyPair: ZMQCurveKeyPair, poolKey: String)? = nil,
                             timeout: Duration = .seconds(5)) throws(ClusterError) -> PoolStatus {
        do {
            let context = try ZMQContext()
            defer { context.close() }
            let dealer = try ZMQSocket(context: context, type: .dealer)
            defer { dealer.close() }
            try dealer.set(.linger(milliseconds: 0), .maxMessageSize(WireLimits.maximumInboundFrameSize))
            if let curve {
                try dealer.set(.curvePublicKey(curve.keyPair.publicKey), .curveSecretKey(curve.keyPair.secretKey), .curveServerKey(curve.poolKey))
            }
            try dealer.connect(endpoint)
            _ = try dealer.send(WireCodec.encode(.status))
            let poller = ZMQPoller()
            _ = poller.register(dealer)
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                let left = deadline - ContinuousClock.now
                _ = try poller.poll(timeout: max(1, Int(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)))
                while let frames = try dealer.receiveMultipart(dontWait: true) {
                    switch try? WireCodec.decode(frames) {
                    case .statusReply(let json)?:
                        do {
                            return try PoolStatus(json: json)
                        } catch {
                            throw ClusterError.cannotConnect(endpoint: endpoint, reason: "the pool's answer is not a status: \(error)")
                        }
                    case .disconnect(let reason)?:
                        throw ClusterError.cannotConnect(endpoint: endpoint, reason: "the peer there is not a pool: \(reason.escapingControlCharacters)")
                    default:
                        continue
                    }
                }
            }
            let hint = curve == nil ? "is 'flow-coordinator pool' running there (and without CURVE: else give --pool-key and --curve-key)?"
                : "is 'flow-coordinator pool' running there, and are --pool-key and --curve-key right?"
            throw ClusterError.cannotConnect(endpoint: endpoint, reason: "no answer within \(timeout.secondsText): \(hint)")
        } catch let error as ClusterError {
            throw error
        } catch {
            throw .cannotConnect(endpoint: endpoint, reason: (error as? ZMQError)?.message ?? "\(error)")
        }
    }
}
