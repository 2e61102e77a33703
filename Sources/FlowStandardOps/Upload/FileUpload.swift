import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// One upload of a file on disk: an optional prefix, the file's first `size` bytes, an optional
/// suffix (a multipart POST's head and tail around the file), streamed with backpressure.
///
/// The body is pumped with futures on the request's own event loop: chunk n+1 is read (on NIO's
/// blocking-I/O pool, never on an event loop or a concurrency thread) while chunk n is written, and
/// written as soon as chunk n is in the socket, without a hop through Swift concurrency between
/// the two. A body in flight holds at most two chunks whatever the file's size. The file stays open
/// as long as anything holds it and closes with the last holder.
struct FileUpload: Sendable {
    /// What the server answered.
    struct Answer: Sendable {
        var status: HTTPResponseStatus
        var headers: HTTPHeaders
        /// The start of the response body (200 bytes unless the request asked for more).
        var excerpt: Data
    }

    /// Bytes per chunk: large enough that the event loop's work per byte stays small.
    static let chunkSize = 1024 * 1024

    let file: OpenFile
    let size: Int64
    let prefix: ByteBuffer?
    let suffix: ByteBuffer?

    /// The body's length in bytes.
    var length: Int64 { Int64(prefix?.readableBytes ?? 0) + size + Int64(suffix?.readableBytes ?? 0) }

    /// Sends the request with this body on `client`; cancelling the calling task cancels it.
    ///
    /// - Parameter keeping: how many bytes of the answer's body to keep in ``Answer/excerpt``.
    func send(url: String, method: HTTPMethod, headers: HTTPHeaders, on client: HTTPClient, tls: TLSConfiguration? = nil,
              deadline: NIODeadline, keeping: Int = 200) async throws -> Answer {
        var request = try HTTPClient.Request(url: url, method: method, headers: headers, tlsConfiguration: tls)
        let loop = client.eventLoopGroup.next()
        request.body = .stream(contentLength: length) { [self] writer in
            writeBody(to: writer, on: loop)
        }
        let task = client.execute(request: request, delegate: AnswerCollector(keeping: keeping), eventLoop: .delegateAndChannel(on: loop), deadline: deadline)
        return try await withTaskCancellationHandler {
            try await task.futureResult.get()
        } onCancel: {
            task.cancel()
        }
    }

    /// Writes the prefix, the file in chunks read one ahead, and the suffix.
    private func writeBody(to writer: HTTPClient.Body.StreamWriter, on loop: any EventLoop) -> EventLoopFuture<Void> {
        let start: EventLoopFuture<Void>
        if let prefix, prefix.readableBytes > 0 {
            start = writer.write(.byteBuffer(prefix))
        } else {
            start = loop.makeSucceededVoidFuture()
        }
        let firstRead = read(at: 0, on: loop)
        let body = start.hop(to: loop).flatMap { [self] in
            pump(firstRead, at: 0, to: writer, on: loop)
        }
        guard let suffix, suffix.readableBytes > 0 else { return body }
        return body.flatMap { writer.write(.byteBuffer(suffix)) }
    }

    /// Writes the chunk `reading` gives (which starts at `offset`) once it is read, starting to
    /// read the next one meanwhile, and goes on until the file's `size` bytes are written.
    private func pump(_ reading: EventLoopFuture<ByteBuffer>?, at offset: Int64, to writer: HTTPClient.Body.StreamWriter,
                      on loop: any EventLoop) -> EventLoopFuture<Void> {
        guard let reading else { return loop.makeSucceededVoidFuture() }
        return reading.flatMap { [self] chunk in
            guard chunk.readableBytes > 0 else {
                return loop.makeFailedFuture(FlowStandardOpError(
                    .unreadableFile, "\(file.path) became shorter while it was sent (\(offset) of \(size) bytes)"))
            }
            let next = offset + Int64(chunk.readableBytes)
            let nextRead = read(at: next, on: loop)
            return writer.write(.byteBuffer(chunk)).hop(to: loop).flatMap {
                pump(nextRead, at: next, to: writer, on: loop)
            }
        }
    }

    /// Starts reading the chunk at `offset`, or returns `nil` past the file's `size` bytes.
    private func read(at offset: Int64, on loop: any EventLoop) -> EventLoopFuture<ByteBuffer>? {
        guard offset < size else { return nil }
        let count = Int(min(Int64(Self.chunkSize), size - offset))
        let file = file
        return NIOThreadPool.singleton.runIfActive(eventLoop: loop) { try file.read(at: offset, count: count) }
    }
}

/// Keeps the status, the headers and the start of the body of an answer; reads the rest of the
/// body (so the connection can be reused) without keeping it.
private final class AnswerCollector: HTTPClientResponseDelegate, Sendable {
    typealias Response = FileUpload.Answer

    private struct State {
        var head: HTTPResponseHead?
        var excerpt = Data()
    }

    // Called on the request's event loop only; the lock satisfies Swift's checker at no cost.
    private let state = NIOLockedValueBox(State())
    private let limit: Int

    init(keeping limit: Int) {
        self.limit = limit
    }

    func didSendRequestPart(task: HTTPClient.Task<Response>, _ part: IOData) {
        UploadMetrics.bytesSent.increment(by: part.readableBytes)
    }

    func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        state.withLockedValue { $0.head = head }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        state.withLockedValue { state in
            if state.excerpt.count < limit { state.excerpt.append(contentsOf: buffer.readableBytesView.prefix(limit - state.excerpt.count)) }
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
        try state.withLockedValue { state in
            guard let head = state.head else { throw HTTPClientError.remoteConnectionClosed }
            return FileUpload.Answer(status: head.status, headers: head.headers, excerpt: state.excerpt)
        }
    }
}
