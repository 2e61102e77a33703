import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Prometheus

/// Serves `GET /metrics` in the Prometheus text format from a registry, on one address, for as
/// long as the program runs (`--metrics HOST:PORT`). Anything else gets 404, or 405 for another
/// method.
final class MetricsServer: Sendable {
    /// The content type of the Prometheus text exposition format.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private let channel: any Channel
    /// Where it listens, as `HOST:PORT` with the real port.
    let address: String

    private init(channel: any Channel, address: String) {
        self.channel = channel
        self.address = address
    }

    /// Binds `endpoint` and starts serving.
    ///
    /// - Parameters:
    ///   - endpoint: the address and port (port 0: one the system picks).
    ///   - registry: what to serve.
    ///   - beforeScrape: called before each scrape, to set gauges that are read rather than counted.
    /// - Throws: when the address cannot be bound (in use, not this machine's).
    static func start(_ endpoint: MetricsEndpoint, registry: PrometheusCollectorRegistry,
                      beforeScrape: @escaping @Sendable () -> Void = {}) async throws -> MetricsServer {
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(MetricsHandler(registry: registry, beforeScrape: beforeScrape))
                }
            }
        let channel = try await bootstrap.bind(host: endpoint.host, port: endpoint.port).get()
        let port = channel.localAddress?.port ?? endpoint.port
        let host = endpoint.host.contains(":") ? "[\(endpoint.host)]" : endpoint.host
        return MetricsServer(channel: channel, address: "\(host):\(port)")
    }

    /// Stops listening; scrapes under way are cut.
    func stop() async {
        try? await channel.close()
    }
}

/// Answers one HTTP/1.1 connection's requests.
private final class MetricsHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let registry: PrometheusCollectorRegistry
    private let beforeScrape: @Sendable () -> Void
    private var head: HTTPRequestHead?

    init(registry: PrometheusCollectorRegistry, beforeScrape: @escaping @Sendable () -> Void) {
        self.registry = registry
        self.beforeScrape = beforeScrape
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        var status = HTTPResponseStatus.ok
        var body: [UInt8]
        var headers = HTTPHeaders()
        if path != "/metrics" {
            status = .notFound
            body = Array("Not found: this server has only /metrics\n".utf8)
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        } else if head.method != .GET && head.method != .HEAD {
            status = .methodNotAllowed
            body = Array("/metrics answers GET\n".utf8)
            headers.add(name: "Allow", value: "GET, HEAD")
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        } else {
            beforeScrape()
            body = []
            body.reserveCapacity(8192)
            registry.emit(into: &body)
            headers.add(name: "Content-Type", value: MetricsServer.contentType)
        }
        headers.add(name: "Content-Length", value: String(body.count))
        let keepAlive = head.isKeepAlive
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        if head.method != .HEAD {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            written.whenComplete { _ in bound.value.close(promise: nil) }
        }
    }
}
