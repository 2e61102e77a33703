#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A file's modification time to the nanosecond, as `skipExisting: modtime` stores it in the
/// object's metadata (`x-amz-meta-mtime`) and compares it: seconds since the epoch with the
/// fraction after a dot, trailing zeros left out (`1732741200.123456789`, `1732741200`), as rclone
/// writes it. Kept as whole seconds and nanoseconds so that no floating point rounds it.
struct FileModificationTime: Sendable, Hashable {
    /// The metadata header that carries it, on S3 and HTTP alike.
    static let header = "x-amz-meta-mtime"

    var seconds: Int64
    var nanoseconds: Int64

    /// The modification time of the file at `path` (links followed), `nil` when it cannot be read.
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        seconds = Int64(info.st_mtim.tv_sec)
        nanoseconds = Int64(info.st_mtim.tv_nsec)
    }

    /// Parses the metadata's text; `nil` for anything that is not a number of seconds.
    init?(text: String) {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, let seconds = Int64(whole) else { return nil }
        var nanoseconds: Int64 = 0
        if parts.count == 2 {
            let digits = parts[1]
            guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
            // Nine digits: more are below a nanosecond, fewer are padded.
            let nine = String(digits.prefix(9)).padding(toLength: 9, withPad: "0", startingAt: 0)
            guard let value = Int64(nine) else { return nil }
            nanoseconds = seconds < 0 ? -value : value
        }
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// `SECONDS.FRACTION`, trailing zeros of the fraction left out (and the dot with them).
    var text: String {
        guard nanoseconds != 0 else { return String(seconds) }
        var fraction = String(abs(nanoseconds))
        fraction = String(repeating: "0", count: max(0, 9 - fraction.count)) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(seconds).\(fraction)"
    }
}
