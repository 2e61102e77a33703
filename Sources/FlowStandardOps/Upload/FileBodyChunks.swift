#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix

/// A request body streamed from a file: an optional prefix, the file's first `size` bytes in
/// chunks, an optional suffix (a multipart POST's head and tail around the file).
///
/// The HTTP client pulls the next chunk only when it has written the last one, so a body in
/// flight holds a chunk or two whatever the file's size. Reads run on NIO's blocking-I/O thread
/// pool, never on a concurrency thread. The file stays open as long as anything holds the body
/// (the client may keep it a moment after the response arrives), and closes with the last holder.
struct FileBodyChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    /// Bytes per chunk: large enough that a fast link is not held up by thread hops.
    static let chunkSize = 1024 * 1024

    let file: OpenFile
    let size: Int64
    let prefix: ByteBuffer?
    let suffix: ByteBuffer?

    /// The body's length in bytes.
    var length: Int64 { Int64(prefix?.readableBytes ?? 0) + size + Int64(suffix?.readableBytes ?? 0) }

    func makeAsyncIterator() -> Iterator {
        Iterator(body: self)
    }

    struct Iterator: AsyncIteratorProtocol {
        let body: FileBodyChunks
        /// Where the next read starts.
        var offset: Int64 = 0
        var sentPrefix = false
        var sentSuffix = false
        /// The next chunk, already being read while the client writes the current one, so disk
        /// and network overlap; at most one chunk ahead, so memory stays bounded.
        var readAhead: Task<ByteBuffer, any Error>?

        init(body: FileBodyChunks) {
            self.body = body
        }

        mutating func next() async throws -> ByteBuffer? {
            if !sentPrefix {
                sentPrefix = true
                readAhead = startRead()
                if let prefix = body.prefix, prefix.readableBytes > 0 { return prefix }
            }
            if let reading = readAhead {
                let chunk = try await reading.value
                guard chunk.readableBytes > 0 else {
                    throw FlowStandardOpError(.unreadableFile,
                                              "\(body.file.path) became shorter while it was sent (\(offset) of \(body.size) bytes)")
                }
                offset += Int64(chunk.readableBytes)
                readAhead = startRead()
                return chunk
            }
            if !sentSuffix {
                sentSuffix = true
                if let suffix = body.suffix, suffix.readableBytes > 0 { return suffix }
            }
            return nil
        }

        /// Starts reading the chunk at ``offset``, or returns `nil` past the end.
        private func startRead() -> Task<ByteBuffer, any Error>? {
            guard offset < body.size else { return nil }
            let count = Int(Swift.min(Int64(FileBodyChunks.chunkSize), body.size - offset))
            let (file, start) = (body.file, offset)
            return Task { try await NIOThreadPool.singleton.runIfActive { try file.read(at: start, count: count) } }
        }
    }
}

/// A file open for reading at any offset (`pread`), closed when the last reference goes.
final class OpenFile: Sendable {
    let path: String
    private let descriptor: Int32

    /// Opens `path` for reading.
    ///
    /// - Throws: ``FlowStandardOpError`` (``FlowStandardOpError/Code/unreadableFile``) naming it.
    init(path: String) throws {
        self.path = path
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw FlowStandardOpError(.unreadableFile, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        close(descriptor)
    }

    /// The file's size now.
    func size() throws -> Int64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw FlowStandardOpError(.unreadableFile, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        return Int64(info.st_size)
    }

    /// Up to `count` bytes from `offset`; fewer only at the end of the file.
    func read(at offset: Int64, count: Int) throws -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: count)
        var endOfFile = false
        while buffer.readableBytes < count && !endOfFile {
            let done = buffer.readableBytes
            _ = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count - done) { pointer -> Int in
                let result = pread(descriptor, pointer.baseAddress, count - done, off_t(offset) + off_t(done))
                if result > 0 { return result }
                if result == 0 {
                    endOfFile = true
                    return 0
                }
                if errno == EINTR { return 0 }
                throw FlowStandardOpError(.unreadableFile, "cannot read \(path): \(String(cString: strerror(errno)))")
            }
        }
        return buffer
    }
}
