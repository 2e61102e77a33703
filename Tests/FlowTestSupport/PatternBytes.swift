import Foundation

/// Test contents in memory, made fast in a debug build.
public enum PatternBytes {
    /// `count` bytes where byte `j` is `j × multiplier + offset` (mod 256): with an odd
    /// multiplier a pattern of period 256, so a byte out of place shows.
    ///
    /// One period is computed and copied along: `Data((0..<count).map { … })`, a closure call a
    /// byte, took most of a minute of a loaded debug main phase for `UploadFaultTests`' 19 MB,
    /// holding a cooperative thread the whole time (gdb samples).
    public static func make(count: Int, multiplier: Int, offset: Int) -> Data {
        let period = (0..<256).map { UInt8(truncatingIfNeeded: $0 &* multiplier &+ offset) }
        var data = Data(count: count)
        data.withUnsafeMutableBytes { raw in
            period.withUnsafeBytes { pattern in
                var at = 0
                while at < count {
                    let length = min(pattern.count, count - at)
                    raw.baseAddress!.advanced(by: at).copyMemory(from: pattern.baseAddress!, byteCount: length)
                    at += length
                }
            }
        }
        return data
    }
}
