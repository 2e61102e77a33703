import Foundation

/// This process's memory as Linux reports it in `/proc/self/status`.
public enum ProcessMemory {
    /// The resident set size now (`VmRSS`), in bytes; `nil` where `/proc` is missing.
    public static func residentBytes() -> Int? {
        statusValue("VmRSS:")
    }

    /// The highest resident set size since the start or the last ``resetPeak()`` (`VmHWM`), in bytes.
    public static func peakResidentBytes() -> Int? {
        statusValue("VmHWM:")
    }

    /// Resets the peak to the current resident size (writes `5` to `/proc/self/clear_refs`).
    ///
    /// - Returns: whether the kernel took it.
    @discardableResult
    public static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }

    /// The highest resident set size of another process, `pid` (its `VmHWM`), in bytes; `nil`
    /// where `/proc` is missing or the process is gone.
    public static func peakResidentBytes(ofProcess pid: Int32) -> Int? {
        statusValue("VmHWM:", file: "/proc/\(pid)/status")
    }

    /// The resident set size of another process, `pid` (its `VmRSS`), in bytes.
    public static func residentBytes(ofProcess pid: Int32) -> Int? {
        statusValue("VmRSS:", file: "/proc/\(pid)/status")
    }

    private static func statusValue(_ field: String, file: String = "/proc/self/status") -> Int? {
        guard let status = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(field) {
            let words = line.dropFirst(field.count).split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let number = words.first.flatMap({ Int($0) }) else { return nil }
            return number * 1024
        }
        return nil
    }
}
