#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A regular file opened for reading in chunks, with errors that name the path and say why
/// (`cannot read /data/a.jpg: No such file or directory`; ``RegularFile``).
final class ReadableFile {
    /// The path as given.
    let path: String
    /// The file's size in bytes when it was opened.
    let size: Int
    private let descriptor: Int32

    /// Opens a regular file.
    ///
    /// - Throws: ``FlowStandardOpError/Code/unreadableFile`` when the path is missing, unreadable
    ///   or not a regular file.
    init(path: String) throws {
        self.path = path
        let opened = try RegularFile.openForReading(path)
        descriptor = opened.descriptor
        size = Int(opened.size)
    }

    deinit {
        close(descriptor)
    }

    /// Calls `body` with successive chunks of the file until its end; memory stays at one chunk.
    ///
    /// - Parameters:
    ///   - chunkSize: the most bytes handed over at once.
    ///   - body: gets each chunk; the buffer is only valid during the call. Return `false` to stop.
    func forEachChunk(chunkSize: Int = 1 << 20, _ body: (UnsafeRawBufferPointer) throws -> Bool) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = read(descriptor, buffer.baseAddress, chunkSize)
            if count < 0 {
                if errno == EINTR { continue }
                throw RegularFile.failure(path, errno)
            }
            if count == 0 { return }
            guard try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) else { return }
        }
    }

    /// Reads the whole file into memory: only for files the caller has decided to hold.
    func readAll() throws -> Data {
        var data = Data()
        data.reserveCapacity(size)
        try forEachChunk { chunk in
            data.append(contentsOf: chunk)
            return true
        }
        return data
    }
}
