import Foundation
import FlowWire
import Synchronization
import ZeroMQ

/// The ROUTER socket workers (and a pool's clients) connect to, bound, with its CURVE settings and
/// the monitor that names the peers of failed handshakes: what a coordinator and a pool both bind.
struct BoundRouter {
    let socket: ZMQSocket
    /// With CURVE: the monitor's pair socket (handshake failures and accepted peers).
    let monitor: ZMQSocket?
    /// The endpoint as bound (with the real port when `*` was asked).
    let endpoint: String

    /// Binds `endpoint`; with `curveSecretKey`, as a CURVE server in the `flow` ZAP domain with a
    /// monitor for failed handshakes (they never reach the ZAP handler), whose connections it names
    /// (``HandshakeFailureLog``).
    ///
    /// - Throws: ``ClusterError/cannotBind(endpoint:reason:)``.
    static func bind(_ endpoint: String, context: ZMQContext, curveSecretKey: String?,
                     maximumInboundFrameSize: Int = WireLimits.maximumInboundFrameSize) throws(ClusterError) -> BoundRouter {
        var opened: [ZMQSocket] = []
        do {
            let router = try ZMQSocket(context: context, type: .router)
            opened.append(router)
            try router.set(.routerMandatory(true), .sendHighWaterMark(0), .receiveHighWaterMark(0), .maxMessageSize(maximumInboundFrameSize))
            var monitor: ZMQSocket?
            if let curveSecretKey {
                try router.set(.curveServer(true), .curveSecretKey(curveSecretKey), .zapDomain("flow"))
                let name = "inproc://flow-monitor-\(UInt64.random(in: 0...UInt64.max))"
                try router.monitor(name, events: [.handshakeFailedProtocol, .handshakeFailedNoDetail, .accepted, .disconnected])
                let pair = try ZMQSocket(context: context, type: .pair)
                opened.append(pair)
                try pair.set(.linger(milliseconds: 0))
                try pair.connect(name)
                monitor = pair
            }
            try router.bind(endpoint)
            return BoundRouter(socket: router, monitor: monitor, endpoint: (try? router.lastEndpoint) ?? endpoint)
        } catch {
            opened.reversed().forEach { $0.close() }
            throw .cannotBind(endpoint: endpoint, reason: (error as? ZMQError)?.message ?? "\(error)")
        }
    }

    func close() {
        monitor?.close()
        socket.close()
    }

    /// An I/O thread's body for a coordinator or a pool (``IOThreadShell/start(name:endpoint:zap:_:)``):
    /// binds, tells `ready` the outcome, and on success serves with `serve` until it returns,
    /// then closes the sockets.
    ///
    /// - Parameter opened: called once bound, before `ready` (the coordinator opens its mailbox).
    static func serve(_ endpoint: String, context: ZMQContext, curveSecretKey: String?, maximumInboundFrameSize: Int,
                      ready: @Sendable (Result<String, ClusterError>) -> Void, opened: () -> Void = {},
                      _ serve: (_ socket: ZMQSocket, _ monitor: ZMQSocket?) -> Void) {
        let router: BoundRouter
        do throws(ClusterError) {
            router = try bind(endpoint, context: context, curveSecretKey: curveSecretKey, maximumInboundFrameSize: maximumInboundFrameSize)
        } catch {
            return ready(.failure(error))
        }
        defer { router.close() }
        opened()
        ready(.success(router.endpoint))
        serve(router.socket, router.monitor)
    }
}
