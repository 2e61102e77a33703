import Foundation
import Logging
import Synchronization
import ZeroMQ

/// The coordinator's ZAP handler (ZeroMQ RFC 27): libzmq asks it about every peer that completes
/// a CURVE handshake, and it admits only the public keys of the authorised-keys list. It serves
/// `inproc://zeromq.zap.01` in the coordinator's context on a thread of its own.
///
/// A refused peer sees nothing: libzmq closes its connection during the handshake. The
/// coordinator logs each refusal once per peer address and key.
final class ZAPHandler: Sendable {
    /// The endpoint libzmq asks, fixed by RFC 27.
    static let endpoint = "inproc://zeromq.zap.01"

    private let keys: Mutex<AuthorizedKeys>
    private let refused = Mutex<Set<String>>([])
    private let logger: Logger
    private let onRefusal: @Sendable (_ address: String, _ key: String?) -> Void

    /// Binds the handler's socket on a thread of its own and serves there until `context` is
    /// terminated (its receive then fails with `ETERM`, and the thread closes the socket, which
    /// `zmq_ctx_term` waits for).
    ///
    /// Called on the I/O thread of a coordinator or a pool as it starts (``IOThreadShell``), never
    /// from async code: it waits for the handler's thread to have bound, a few microseconds.
    ///
    /// - Throws: ``ZMQError`` when the socket cannot be bound (another handler in the context).
    init(context: ZMQContext, keys: AuthorizedKeys, logger: Logger, onRefusal: @escaping @Sendable (String, String?) -> Void) throws {
        self.keys = Mutex(keys)
        self.logger = logger
        self.onRefusal = onRefusal
        // The socket lives on the handler's thread, as ZeroMQ sockets must.
        let bound = Mutex<(any Error)?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            let socket: ZMQSocket
            do {
                socket = try ZMQSocket(context: context, type: .rep)
                try socket.set(.linger(milliseconds: 0))
                try socket.bind(Self.endpoint)
            } catch {
                bound.withLock { $0 = error }
                ready.signal()
                return
            }
            defer { socket.close() }
            ready.signal()
            serve(socket)
        }
        thread.name = "flow-zap"
        thread.start()
        ready.wait()
        if let error = bound.withLock({ $0 }) { throw error }
    }

    /// Replaces the list; peers that connect from now on are judged by it.
    func reload(_ keys: AuthorizedKeys) {
        self.keys.withLock { $0 = keys }
        refused.withLock { $0 = [] }
    }

    /// Whether `key` is on the list now.
    func admits(_ key: String) -> Bool { keys.withLock { $0.admits(key) } }

    /// Answers requests until the context ends: a blocking receive, woken by a request or by
    /// `ETERM`, with no time-out to look at a flag.
    private func serve(_ socket: ZMQSocket) {
        while true {
            let request: [Data]
            do {
                guard let received = try socket.receiveMultipart() else { continue }
                request = received
            } catch {
                // The context is ending (ETERM): nothing more to judge.
                return
            }
            let reply = answer(request)
            do {
                _ = try socket.send(reply)
            } catch {
                if (error as? ZMQError)?.isTerminated == true { return }
                logger.warning("ZAP: cannot answer libzmq: \(error)")
            }
        }
    }

    /// RFC 27: version, request id, domain, address, routing id, mechanism, credentials.
    func answer(_ request: [Data]) -> [Data] {
        let version = Data("1.0".utf8)
        guard request.count >= 6, request[0] == version else {
            return [version, request.count > 1 ? request[1] : Data(), Data("500".utf8), Data("bad ZAP request".utf8), Data(), Data()]
        }
        let requestID = request[1]
        let address = String(decoding: request[3], as: UTF8.self)
        let mechanism = String(decoding: request[5], as: UTF8.self)
        func refuse(_ reason: String, key: String?) -> [Data] {
            let first = refused.withLock { $0.insert("\(address) \(key ?? "")").inserted }
            if first { onRefusal(address, key) }
            return [version, requestID, Data("400".utf8), Data(reason.utf8), Data(), Data()]
        }
        guard mechanism == "CURVE", request.count >= 7, request[6].count == 32, let key = try? ZMQ.z85Encode(request[6]) else {
            return refuse("CURVE required", key: nil)
        }
        guard admits(key) else { return refuse("key not authorised", key: key) }
        // The key is the peer's user id: the coordinator reads it from each message.
        return [version, requestID, Data("200".utf8), Data("OK".utf8), Data(key.utf8), Data()]
    }
}
