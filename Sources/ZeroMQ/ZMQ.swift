import CZeroMQ
public import Foundation

/// Facts about the linked libzmq, and Z85 text encoding.
public enum ZMQ {
    /// The version of the libzmq loaded at run time (`zmq_version`).
    public static var version: ZMQVersion {
        var major: Int32 = 0
        var minor: Int32 = 0
        var patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return ZMQVersion(major: Int(major), minor: Int(minor), patch: Int(patch))
    }

    /// Whether libzmq was built with a capability (`zmq_has`).
    ///
    /// - Parameter capability: `ipc`, `pgm`, `tipc`, `norm`, `curve`, `gssapi` or `draft`.
    /// - Returns: `true` if it is available.
    public static func has(_ capability: String) -> Bool {
        zmq_has(capability) == 1
    }

    /// Encodes bytes as Z85 text (`zmq_z85_encode`), e.g. a 32-byte key as 40 characters.
    ///
    /// - Parameter data: The bytes; their count must be a multiple of 4.
    /// - Returns: The text, five characters per four bytes.
    /// - Throws: ``ZMQError`` with `EINVAL` if the count is not a multiple of 4.
    public static func z85Encode(_ data: Data) throws -> String {
        guard data.count % 4 == 0 else {
            throw ZMQError(code: ZMQError.invalidArgument, operation: "z85 encode \(data.count) bytes (not a multiple of 4)")
        }
        var text = [CChar](repeating: 0, count: data.count / 4 * 5 + 1)
        let bytes = [UInt8](data)
        guard zmq_z85_encode(&text, bytes, bytes.count) != nil else {
            throw ZMQError.last("z85 encode \(data.count) bytes")
        }
        return string(fromNulTerminated: text)
    }

    /// Decodes Z85 text (`zmq_z85_decode`).
    ///
    /// - Parameter text: The text; its length must be a multiple of 5.
    /// - Returns: The bytes, four per five characters.
    /// - Throws: ``ZMQError`` with `EINVAL` for a wrong length or a character outside Z85.
    public static func z85Decode(_ text: String) throws -> Data {
        let length = text.utf8.count
        guard length % 5 == 0, !text.utf8.contains(0) else {
            throw ZMQError(code: ZMQError.invalidArgument, operation: "z85 decode \(length) characters (not a multiple of 5)")
        }
        var bytes = [UInt8](repeating: 0, count: length / 5 * 4)
        guard zmq_z85_decode(&bytes, text) != nil else {
            throw ZMQError(code: ZMQError.invalidArgument, operation: "z85 decode: not Z85 text")
        }
        return Data(bytes)
    }

    /// The text before the first NUL of a C buffer.
    static func string(fromNulTerminated buffer: [CChar]) -> String {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
