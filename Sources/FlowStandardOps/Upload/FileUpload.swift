import AsyncHTTPClient
import Flow
import Foundation
import Metrics
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
    /// The checksum computed over the file's bytes as they are read (never a second read), `nil`
    /// for none.
    var checksum: UploadChecksumRecorder? = nil
    /// Whether the file goes `aws-chunked` with ``checksum``'s value in a trailer
    /// (`x-amz-trailer`), as the AWS SDKs stream a body whose checksum is known only at its end.
    var awsChunked = false
    /// Where the op's progress goes (its group's bytes budget on a worker), read from the task
    /// that makes the upload: each chunk is reported, and waits for the budget, before it is
    /// written. `nil` (no budget) costs nothing.
    var progress: (any FlowProgressSink)? = FlowProgress.sink

    /// The body's length in bytes, as sent (with the `aws-chunked` framing and trailer).
    var length: Int64 {
        var length = Int64(prefix?.readableBytes ?? 0) + size + Int64(suffix?.readableBytes ?? 0)
        if awsChunked, let checksum {
            var offset: Int64 = 0
            while offset < size {
                let count = min(Int64(Self.chunkSize), size - offset)
                length += Int64(String(count, radix: 16).utf8.count) + 4
                offset += count
            }
            length += Int64(Self.trailer(checksum.algorithm, value: checksum.placeholder).readableBytes)
        }
        return length
    }

    /// The end of an `aws-chunked` body: the empty chunk and the trailer with the checksum.
    static func trailer(_ algorithm: UploadChecksum, value: String) -> ByteBuffer {
        ByteBuffer(string: "0\r\n\(algorithm.s3Header ?? ""):\(value)\r\n\r\n")
    }

    /// Sends the request with this body on `client`; cancelling the calling task cancels it.
    ///
    /// - Parameter keeping: how many bytes of the answer's body to keep in ``Answer/excerpt``.
    func send(url: String, method: HTTPMethod, headers: HTTPHeaders, on client: HTTPClient, tls: TLSConfiguration? = nil,
              deadline: NIODeadline, keeping: Int = 200) async throws -> Answer {
        var headers = headers
        HTTPUploadClient.stamp(&headers)
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
        checksum?.restart()
        if size == 0 { checksum?.update(ByteBuffer(), final: true) }
        let firstRead = read(at: 0, on: loop)
        var body = start.hop(to: loop).flatMap { [self] in
            pump(firstRead, at: 0, to: writer, on: loop)
        }
        if awsChunked, let checksum {
            body = body.flatMap { writer.write(.byteBuffer(Self.trailer(checksum.algorithm, value: checksum.value ?? checksum.placeholder))) }
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
            var framed = chunk
            if awsChunked {
                var buffer = ByteBuffer(string: String(chunk.readableBytes, radix: 16) + "\r\n")
                buffer.writeImmutableBuffer(chunk)
                buffer.writeString("\r\n")
                framed = buffer
            }
            let written: EventLoopFuture<Void>
            if let progress {
                let count = chunk.readableBytes
                written = loop.makeFutureWithTask { try await progress.sent(bytes: count) }.flatMap {
                    writer.write(.byteBuffer(framed)).hop(to: loop)
                }
            } else {
                written = writer.write(.byteBuffer(framed)).hop(to: loop)
            }
            return written.flatMap {
                pump(nextRead, at: next, to: writer, on: loop)
            }
        }
    }

    /// Starts reading the chunk at `offset`, or returns `nil` past the file's `size` bytes.
    private func read(at offset: Int64, on loop: any EventLoop) -> EventLoopFuture<ByteBuffer>? {
        guard offset < size else { return nil }
        let count = Int(min(Int64(Self.chunkSize), size - offset))
        let (file, checksum) = (file, checksum)
        let last = offset + Int64(count) >= size
        return NIOThreadPool.singleton.runIfActive(eventLoop: loop) {
            let chunk = try file.read(at: offset, count: count)
            // Chunks are read one after the other, in order: the checksum sees the file as sent.
            checksum?.update(chunk, final: last && chunk.readableBytes == count)
            return chunk
        }
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
