import CZeroMQ
public import Foundation

extension ZMQSocket {
    /// Sets socket options in order.
    ///
    /// - Parameter options: The options, e.g. `.routingID(id), .sendHighWaterMark(10_000)`.
    /// - Throws: ``ZMQError`` naming the first option libzmq rejects; the ones before it stay set.
    public func set(_ options: ZMQSocketOption...) throws {
        try set(options)
    }

    /// Sets socket options in order.
    ///
    /// - Parameter options: The options.
    /// - Throws: ``ZMQError`` naming the first option libzmq rejects; the ones before it stay set.
    public func set(_ options: [ZMQSocketOption]) throws {
        for option in options {
            let (code, value) = option.encoded
            switch value {
            case .int(let number):
                guard let int32 = Int32(exactly: number) else {
                    throw ZMQError(code: ZMQError.invalidArgument, operation: "set \(option) on \(type)")
                }
                try setOption(code, int: int32, describing: "\(option)")
            case .int64(let number):
                try setOption(code, int64: number, describing: "\(option)")
            case .bytes(let bytes):
                try setOption(code, bytes: bytes, describing: "\(option)")
            }
        }
    }

    /// The linger period in milliseconds (`ZMQ_LINGER`); -1 is forever.
    public var linger: Int {
        get throws { Int(try intOption(ZMQ_LINGER)) }
    }

    /// The send high-water mark in messages (`ZMQ_SNDHWM`).
    public var sendHighWaterMark: Int {
        get throws { Int(try intOption(ZMQ_SNDHWM)) }
    }

    /// The receive high-water mark in messages (`ZMQ_RCVHWM`).
    public var receiveHighWaterMark: Int {
        get throws { Int(try intOption(ZMQ_RCVHWM)) }
    }

    /// The receive time-out in milliseconds (`ZMQ_RCVTIMEO`); -1 is forever.
    public var receiveTimeout: Int {
        get throws { Int(try intOption(ZMQ_RCVTIMEO)) }
    }

    /// The send time-out in milliseconds (`ZMQ_SNDTIMEO`); -1 is forever.
    public var sendTimeout: Int {
        get throws { Int(try intOption(ZMQ_SNDTIMEO)) }
    }

    /// The routing id this socket presents to ROUTER peers (`ZMQ_ROUTING_ID`); empty if unset.
    public var routingID: Data {
        get throws { Data(try bytesOption(ZMQ_ROUTING_ID, capacity: 256)) }
    }

    /// The endpoint of the last bind or connect (`ZMQ_LAST_ENDPOINT`), with a wildcard port
    /// resolved, e.g. `tcp://127.0.0.1:41235`; empty before any.
    public var lastEndpoint: String {
        get throws {
            var bytes = try bytesOption(ZMQ_LAST_ENDPOINT, capacity: 1024)
            if bytes.last == 0 { bytes.removeLast() }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Whether a message can be received or sent now without blocking (`ZMQ_EVENTS`).
    ///
    /// Reading it also processes libzmq's pending commands, which an event loop watching
    /// ``fileDescriptor`` must do after every wake-up: that descriptor is edge-triggered.
    public var events: ZMQEvents {
        get throws { ZMQEvents(rawValue: Int16(truncatingIfNeeded: try intOption(ZMQ_EVENTS))) }
    }

    /// A file descriptor that becomes readable when ``events`` may have changed (`ZMQ_FD`).
    ///
    /// It signals edge-triggered and is not the socket's data channel: after it fires, read
    /// ``events`` and receive until `nil`.
    public var fileDescriptor: Int32 {
        get throws { try intOption(ZMQ_FD) }
    }

    /// Sets an `int` option by its libzmq name, for options ``ZMQSocketOption`` lacks.
    ///
    /// - Parameters:
    ///   - code: The option, e.g. `ZMQ_TCP_KEEPALIVE`.
    ///   - value: Its value.
    /// - Throws: ``ZMQError`` if libzmq rejects it or the socket is closed.
    public func setOption(_ code: Int32, int value: Int32) throws {
        try setOption(code, int: value, describing: "option \(code) = \(value)")
    }

    /// Sets a byte-string option by its libzmq name, for options ``ZMQSocketOption`` lacks.
    ///
    /// - Parameters:
    ///   - code: The option, e.g. `ZMQ_SOCKS_PROXY`.
    ///   - bytes: Its value, passed with exactly this length.
    /// - Throws: ``ZMQError`` if libzmq rejects it or the socket is closed.
    public func setOption(_ code: Int32, bytes: [UInt8]) throws {
        try setOption(code, bytes: bytes, describing: "option \(code) (\(bytes.count) bytes)")
    }

    /// Reads an `int` option by its libzmq name.
    ///
    /// - Parameter code: The option, e.g. `ZMQ_LINGER`.
    /// - Returns: Its value.
    /// - Throws: ``ZMQError`` if libzmq rejects it or the socket is closed.
    public func intOption(_ code: Int32) throws -> Int32 {
        let handle = try openHandle("get option \(code) on \(type)")
        var value: Int32 = 0
        var size = MemoryLayout<Int32>.size
        if zmq_getsockopt(handle, code, &value, &size) != 0 {
            throw ZMQError.last("get option \(code) on \(type)")
        }
        return value
    }

    /// Reads a byte-string option by its libzmq name.
    ///
    /// - Parameters:
    ///   - code: The option, e.g. `ZMQ_ROUTING_ID`.
    ///   - capacity: The most bytes it can hold.
    /// - Returns: Its bytes, as many as libzmq reports (strings include their NUL).
    /// - Throws: ``ZMQError`` if libzmq rejects it or the capacity is too small (`EINVAL`).
    public func bytesOption(_ code: Int32, capacity: Int) throws -> [UInt8] {
        let handle = try openHandle("get option \(code) on \(type)")
        var bytes = [UInt8](repeating: 0, count: capacity)
        var size = capacity
        if zmq_getsockopt(handle, code, &bytes, &size) != 0 {
            throw ZMQError.last("get option \(code) on \(type)")
        }
        bytes.removeSubrange(size...)
        return bytes
    }

    private func setOption(_ code: Int32, int value: Int32, describing name: String) throws {
        let handle = try openHandle("set \(name) on \(type)")
        var value = value
        if zmq_setsockopt(handle, code, &value, MemoryLayout<Int32>.size) != 0 {
            throw ZMQError.last("set \(name) on \(type)")
        }
    }

    private func setOption(_ code: Int32, int64 value: Int64, describing name: String) throws {
        let handle = try openHandle("set \(name) on \(type)")
        var value = value
        if zmq_setsockopt(handle, code, &value, MemoryLayout<Int64>.size) != 0 {
            throw ZMQError.last("set \(name) on \(type)")
        }
    }

    private func setOption(_ code: Int32, bytes: [UInt8], describing name: String) throws {
        let handle = try openHandle("set \(name) on \(type)")
        let result = bytes.withUnsafeBytes { buffer in
            zmq_setsockopt(handle, code, buffer.baseAddress, buffer.count)
        }
        if result != 0 {
            throw ZMQError.last("set \(name) on \(type)")
        }
    }
}
