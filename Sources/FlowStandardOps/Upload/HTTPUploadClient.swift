import AsyncHTTPClient
import Flow
import Foundation
import Metrics
import NIOCore
import NIOHTTP1
import NIOPosix

/// The one HTTP client of a process that uploads: AsyncHTTPClient on NIO's shared event loops,
/// with a connection pool per host so that a group's uploads reuse their connections.
///
/// It lives as long as the process, as `HTTPClient.shared` does, so nothing has to shut it down
/// and no upload can find it shut. A cancelled upload cancels its request and closes only that
/// request's connection.
enum HTTPUploadClient {
    /// Connections per host kept open at most, beyond which requests wait for one: more than a
    /// worker's slots, so uploads to one server never queue behind each other.
    static let connectionsPerHost = 64

    /// `flow/VERSION`, sent with every request unless the op's `headers` name another.
    static let userAgent = "flow/" + FlowVersion.current

    /// Adds ``userAgent`` to `headers` unless they have a `User-Agent` already.
    static func stamp(_ headers: inout HTTPHeaders) {
        if !headers.contains(name: "User-Agent") { headers.add(name: "User-Agent", value: userAgent) }
    }

    static let shared: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connectionsPerHost)
        configuration.timeout = .init(connect: .seconds(3))
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        configuration.httpVersion = .http1Only
        return HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    }()

    /// Sends a request whose body (`length` bytes) is in memory and reads the answer to its end
    /// (so the connection can be reused), keeping the first `keeping` bytes of it.
    static func execute(_ request: HTTPClientRequest, length: Int, deadline: NIODeadline, keeping limit: Int) async throws
        -> FileUpload.Answer {
        var request = request
        stamp(&request.headers)
        let response = try await shared.execute(request, deadline: deadline)
        // An answer came: the body was sent.
        UploadMetrics.bytesSent.increment(by: length)
        var kept = Data()
        for try await part in response.body where kept.count < limit {
            kept.append(contentsOf: part.readableBytesView.prefix(limit - kept.count))
        }
        return FileUpload.Answer(status: response.status, headers: response.headers, excerpt: kept)
    }
}
