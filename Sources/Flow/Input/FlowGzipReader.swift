import CZlib
import Foundation

/// Reads a gzip file's bytes decompressed, a block at a time (zlib's `inflate`), for a group's
/// input file ending in `.gz` or starting with gzip's magic bytes: an S3 Inventory list comes as
/// `.csv.gz`. Files of several gzip members one after another (as `cat a.gz b.gz` makes, and as
/// some inventories are written) are read whole.
final class FlowGzipReader {
    /// Compressed bytes read from the file at a time.
    static let inputSize = 64 << 10

    private let descriptor: Int32
    private let stream: UnsafeMutablePointer<z_stream>
    /// Compressed bytes zlib reads from: allocated once, so its address stays what zlib holds.
    private let input: UnsafeMutablePointer<UInt8>
    private var inputEnded = false
    /// A member ended and no byte followed: the file's end.
    private var ended = false

    /// Reads `descriptor` (the caller's, left open) as gzip.
    ///
    /// - Throws: a message when zlib cannot start.
    init(descriptor: Int32) throws(FlowGzipError) {
        self.descriptor = descriptor
        input = .allocate(capacity: Self.inputSize)
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // 16 + MAX_WBITS: a gzip header and trailer, not zlib's.
        guard flow_inflate_init(stream, 16 + MAX_WBITS) == Z_OK else {
            stream.deallocate()
            input.deallocate()
            throw FlowGzipError("zlib could not start")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
        input.deallocate()
    }

    /// Whether the file at `descriptor` starts with gzip's magic bytes (`1f 8b`); its offset is
    /// left as it was.
    static func isGzip(descriptor: Int32) -> Bool {
        var magic: (UInt8, UInt8) = (0, 0)
        let got = withUnsafeMutableBytes(of: &magic) { pread(descriptor, $0.baseAddress, 2, 0) }
        return got == 2 && magic.0 == 0x1F && magic.1 == 0x8B
    }

    /// Decompresses up to `count` bytes into `buffer`; 0 at the file's end.
    ///
    /// - Throws: ``FlowGzipError`` for bytes that are not gzip, a file cut short, or a read that failed.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws(FlowGzipError) -> Int {
        guard !ended else { return 0 }
        stream.pointee.next_out = buffer.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(count)
        while stream.pointee.avail_out > 0 {
            if stream.pointee.avail_in == 0, !inputEnded { try refill() }
            let code = inflate(stream, Z_NO_FLUSH)
            switch code {
            case Z_STREAM_END:
                // Another member may follow.
                if stream.pointee.avail_in == 0, !inputEnded { try refill() }
                if stream.pointee.avail_in == 0 {
                    ended = true
                    return count - Int(stream.pointee.avail_out)
                }
                inflateReset(stream)
            case Z_OK:
                continue
            case Z_BUF_ERROR where inputEnded && stream.pointee.avail_in == 0:
                throw FlowGzipError("the gzip data is cut short (the file ends inside it)")
            case Z_BUF_ERROR:
                continue
            default:
                let reason = stream.pointee.msg.map { String(cString: $0) } ?? "code \(code)"
                throw FlowGzipError("not gzip data, or damaged: \(reason)")
            }
        }
        return count
    }

    private func refill() throws(FlowGzipError) {
        let got = Foundation.read(descriptor, input, Self.inputSize)
        guard got >= 0 else { throw FlowGzipError("cannot read it: \(String(cString: strerror(errno)))") }
        if got == 0 {
            inputEnded = true
            return
        }
        stream.pointee.next_in = input
        stream.pointee.avail_in = uInt(got)
    }
}

/// Why a gzip input file could not be read.
struct FlowGzipError: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
