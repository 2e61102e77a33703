import Foundation

/// Writes large test files of varied bytes without holding them in memory.
public enum PseudoRandomFile {
    /// Writes `size` bytes to `url` in 1 MB chunks: one generated chunk, stamped with its index so
    /// no two chunks are equal.
    ///
    /// - Parameters:
    ///   - url: the file to create (replaced if present).
    ///   - size: its size in bytes.
    ///   - seed: changes the content.
    public static func write(to url: URL, size: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) throws {
        let chunkSize = 1 << 20
        var state = seed | 1
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        chunk.withUnsafeMutableBytes { buffer in
            let words = buffer.bindMemory(to: UInt64.self)
            for index in words.indices {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                words[index] = state
            }
        }
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw TestSupportError("cannot create \(url.path)")
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var written = 0
        var index: UInt64 = 0
        while written < size {
            withUnsafeBytes(of: index ^ seed) { stamp in
                for offset in 0..<8 { chunk[offset] = stamp[offset] }
            }
            let count = min(chunkSize, size - written)
            try handle.write(contentsOf: chunk.prefix(count))
            written += count
            index += 1
        }
    }
}
