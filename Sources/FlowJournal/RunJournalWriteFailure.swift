#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A journal write that failed while its run went on (a full disk, a file gone): what the run did
/// from then on would not be recorded, so the run must stop
/// (``RunJournal/onWriteFailure(_:)``).
public struct RunJournalWriteFailure: Error, CustomStringConvertible, Sendable {
    /// The journal file.
    public let path: String
    /// What failed, in words.
    public let reason: String
    /// The bytes free for the journal (`statvfs`'s available blocks) on its folder's filesystem
    /// when the write failed; `nil` when that could not be told.
    public let freeBytes: UInt64?

    init(path: String, reason: String, freeBytes: UInt64?) {
        self.path = path
        self.reason = reason
        self.freeBytes = freeBytes
    }

    public var description: String { "\(path): \(reason)" }

    /// The journal's folder, whose filesystem ``freeBytes`` tells of.
    public var folder: String { Self.folder(of: path) }

    /// The folder of `path`, for `statvfs`.
    static func folder(of path: String) -> String {
        let folder = (path as NSString).deletingLastPathComponent
        return folder.isEmpty ? "." : folder
    }

    /// The bytes an unprivileged writer may still use on the filesystem holding `path` (a
    /// folder), `nil` when `statvfs` fails.
    static func freeBytes(at folder: String) -> UInt64? {
        var stats = statvfs()
        guard statvfs(folder, &stats) == 0 else { return nil }
        return UInt64(stats.f_bavail) * UInt64(stats.f_frsize)
    }

    /// `bytes` for a reader: `0 bytes`, `512 bytes`, `3.5 KiB`, `1.2 GiB`.
    public static func describe(bytes: UInt64) -> String {
        guard bytes >= 1024 else { return "\(bytes) bytes" }
        var value = Double(bytes)
        var unit = "bytes"
        for next in ["KiB", "MiB", "GiB", "TiB"] where value >= 1024 {
            value /= 1024
            unit = next
        }
        return String(format: "%.1f", value) + " " + unit
    }
}
