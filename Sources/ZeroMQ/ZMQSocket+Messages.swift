import CZeroMQ
public import Foundation

extension ZMQSocket {
    /// Sends a multipart message: every frame but the last goes with `ZMQ_SNDMORE`.
    ///
    /// libzmq delivers a message whole or not at all, and only its first frame can be refused
    /// for lack of room, so `false` means that nothing was sent.
    ///
    /// - Parameters:
    ///   - frames: The frames, at least one. For a ROUTER the first names the peer.
    ///   - flags: `.dontWait` to return `false` rather than block; `.sendMore` if more frames
    ///     of this message follow in a later call.
    /// - Returns: `true` once queued; `false` if it would block (`.dontWait`) or the send
    ///   time-out passed.
    /// - Throws: ``ZMQError``: `EHOSTUNREACH` for an unknown peer of a ROUTER with
    ///   `routerMandatory`, `ETERM` once the context is shut down, `EINVAL` for no frames.
    @discardableResult
    public func send(_ frames: [Data], flags: ZMQSendFlags = []) throws -> Bool {
        guard !frames.isEmpty else {
            throw ZMQError(code: ZMQError.invalidArgument, operation: "send on \(type): no frames")
        }
        let lastIndex = frames.count - 1
        for (index, frame) in frames.enumerated() {
            let frameFlags = index < lastIndex ? flags.union(.sendMore) : flags
            if try !sendFrame(frame, flags: frameFlags) {
                guard index == 0 else {
                    throw ZMQError(code: ZMQError.again, operation: "send on \(type): frame \(index)")
                }
                return false
            }
        }
        return true
    }

    /// Sends one frame.
    ///
    /// - Parameters:
    ///   - frame: The bytes, copied into a libzmq message.
    ///   - more: Whether more frames of the same message follow.
    ///   - dontWait: Return `false` rather than block when the frame cannot be queued.
    /// - Returns: `true` once queued; `false` if it would block or the send time-out passed.
    /// - Throws: ``ZMQError`` as for ``send(_:flags:)``.
    @discardableResult
    public func send(_ frame: Data, more: Bool = false, dontWait: Bool = false) throws -> Bool {
        var flags: ZMQSendFlags = []
        if more { flags.insert(.sendMore) }
        if dontWait { flags.insert(.dontWait) }
        return try sendFrame(frame, flags: flags)
    }

    /// Receives a whole multipart message.
    ///
    /// - Parameter dontWait: Return `nil` at once when no message is waiting.
    /// - Returns: The frames, or `nil` if none was waiting (`dontWait`) or the receive time-out
    ///   passed.
    /// - Throws: ``ZMQError``: `ETERM` once the context is shut down, `ENOTSOCK` once closed.
    public func receiveMultipart(dontWait: Bool = false) throws -> [Data]? {
        guard let first = try receiveFrame(dontWait: dontWait) else { return nil }
        var frames = [first.data]
        var more = first.more
        while more {
            // The rest of a message arrives with its first frame: this does not wait.
            guard let next = try receiveFrame(dontWait: false) else {
                throw ZMQError(code: ZMQError.again, operation: "receive on \(type): frame \(frames.count)")
            }
            frames.append(next.data)
            more = next.more
        }
        return frames
    }

    /// Receives one frame.
    ///
    /// - Parameter dontWait: Return `nil` at once when no frame is waiting.
    /// - Returns: The frame's bytes and whether more frames of its message follow, or `nil` if
    ///   none was waiting (`dontWait`) or the receive time-out passed.
    /// - Throws: ``ZMQError``: `ETERM` once the context is shut down, `ENOTSOCK` once closed.
    public func receiveFrame(dontWait: Bool = false) throws -> (data: Data, more: Bool)? {
        try receiveFrame(dontWait: dontWait, property: nil).map { ($0.data, $0.more) }
    }

    /// Receives a message, with the `User-Id` its connection's authentication gave (ZAP, RFC 27:
    /// the CURVE key a coordinator's handler returns); `nil` when there was none.
    ///
    /// - Returns: the frames and the user id, or `nil` if nothing was waiting (`dontWait`).
    public func receiveMultipartWithUserID(dontWait: Bool = false) throws -> (frames: [Data], userID: String?)? {
        guard let first = try receiveFrame(dontWait: dontWait, property: "User-Id") else { return nil }
        var frames = [first.data]
        var more = first.more
        // A ROUTER's first frame is the routing id it made up, without the connection's
        // properties: the user id comes with the frames the peer sent.
        var userID = first.property
        while more {
            guard let next = try receiveFrame(dontWait: false, property: userID == nil ? "User-Id" : nil) else {
                throw ZMQError(code: ZMQError.again, operation: "receive on \(type): frame \(frames.count)")
            }
            frames.append(next.data)
            more = next.more
            if userID == nil { userID = next.property }
        }
        return (frames, userID)
    }

    private func receiveFrame(dontWait: Bool, property: String?) throws -> (data: Data, more: Bool, property: String?)? {
        let handle = try openHandle("receive on \(type)")
        let flags = dontWait ? ZMQ_DONTWAIT : 0
        while true {
            zmq_msg_init(message)
            if zmq_msg_recv(message, handle, flags) < 0 {
                let code = zmq_errno()
                zmq_msg_close(message)
                if code == ZMQError.interrupted { continue }
                if code == ZMQError.again { return nil }
                throw ZMQError(code: code, operation: "receive on \(type)")
            }
            let size = zmq_msg_size(message)
            let data = size == 0 ? Data() : Data(bytes: zmq_msg_data(message), count: size)
            let more = zmq_msg_more(message) != 0
            let value = property.flatMap { zmq_msg_gets(message, $0) }.map { String(cString: $0) }
            zmq_msg_close(message)
            return (data, more, value)
        }
    }

    /// Receives and drops one frame without waiting or copying it.
    ///
    /// - Returns: Whether a frame was there.
    func discardFrame() throws -> Bool {
        let handle = try openHandle("receive on \(type)")
        while true {
            zmq_msg_init(message)
            let received = zmq_msg_recv(message, handle, ZMQ_DONTWAIT) >= 0
            let code = zmq_errno()
            zmq_msg_close(message)
            if received { return true }
            if code == ZMQError.interrupted { continue }
            if code == ZMQError.again { return false }
            throw ZMQError(code: code, operation: "receive on \(type)")
        }
    }

    /// Sends one frame, retrying when a signal interrupts the call.
    func sendFrame(_ frame: Data, flags: ZMQSendFlags) throws -> Bool {
        let handle = try openHandle("send on \(type)")
        while true {
            let result = frame.withUnsafeBytes { bytes in
                zmq_send(handle, bytes.baseAddress, bytes.count, flags.rawValue)
            }
            if result >= 0 { return true }
            let code = zmq_errno()
            if code == ZMQError.interrupted { continue }
            if code == ZMQError.again { return false }
            throw ZMQError(code: code, operation: "send on \(type)")
        }
    }
}
