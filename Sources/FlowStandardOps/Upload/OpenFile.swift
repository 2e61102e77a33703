#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// A file open for reading at any offset (`pread`), closed when the last reference goes.
final class OpenFile: Sendable {
    let path: String
    /// The file's size when it was opened.
    let size: Int64
    private let descriptor: Int32

    /// Opens `path` for reading.
    ///
    /// - Throws: ``FlowStandardOpError`` (``FlowStandardOpError/Code/unreadableFile``) naming it,
    ///   also when it is not a regular file (``RegularFile``).
    init(path: String) throws {
        self.path = path
        (descriptor, size) = try RegularFile.openForReading(path)
    }

    deinit {
        close(descriptor)
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
                throw RegularFile.failure(path, errno)
            }
        }
        return buffer
    }
}
