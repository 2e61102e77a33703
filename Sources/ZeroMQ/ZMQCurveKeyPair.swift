import CZeroMQ

/// A CURVE long-term key pair in Z85 text (40 characters per key).
public struct ZMQCurveKeyPair: Sendable, Hashable, CustomStringConvertible {
    /// The public key, safe to share.
    public let publicKey: String
    /// The secret key, never to leave its owner.
    public let secretKey: String

    /// Wraps existing keys without checking them.
    ///
    /// - Parameters:
    ///   - publicKey: The public key, 40 Z85 characters.
    ///   - secretKey: The matching secret key, 40 Z85 characters.
    public init(publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// Rebuilds a key pair from its secret key, deriving the public key (`zmq_curve_public`).
    ///
    /// - Parameter secretKey: The secret key, 40 Z85 characters.
    /// - Throws: ``ZMQError`` with `EINVAL` for a malformed key, `ENOTSUP` without CURVE.
    public init(secretKey: String) throws {
        guard secretKey.utf8.count == 40 else {
            throw ZMQError(code: ZMQError.invalidArgument, operation: "curve public key from a \(secretKey.utf8.count)-character secret")
        }
        var publicBuffer = [CChar](repeating: 0, count: 41)
        if zmq_curve_public(&publicBuffer, secretKey) != 0 {
            throw ZMQError.last("curve public key")
        }
        self.init(publicKey: ZMQ.string(fromNulTerminated: publicBuffer), secretKey: secretKey)
    }

    /// Generates a new random key pair (`zmq_curve_keypair`).
    ///
    /// - Returns: The key pair.
    /// - Throws: ``ZMQError`` with `ENOTSUP` if libzmq was built without CURVE.
    public static func generate() throws -> ZMQCurveKeyPair {
        var publicBuffer = [CChar](repeating: 0, count: 41)
        var secretBuffer = [CChar](repeating: 0, count: 41)
        if zmq_curve_keypair(&publicBuffer, &secretBuffer) != 0 {
            throw ZMQError.last("curve key pair")
        }
        return ZMQCurveKeyPair(
            publicKey: ZMQ.string(fromNulTerminated: publicBuffer),
            secretKey: ZMQ.string(fromNulTerminated: secretBuffer)
        )
    }

    /// The public key only, so that printing a key pair cannot leak the secret.
    public var description: String {
        "ZMQCurveKeyPair(publicKey: \(publicKey), secretKey: <redacted>)"
    }
}
