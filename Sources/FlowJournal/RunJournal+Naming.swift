import Foundation

extension RunJournal {
    /// The folder journals go to by default: `$XDG_STATE_HOME/flow/runs`, or
    /// `~/.local/state/flow/runs` when it is unset.
    public static func defaultFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/flow/runs" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.local/state/flow/runs"
    }

    /// A new run id: the start time and a random part (`20261123-075930-3f2a9c`), sortable by time.
    public static func newRunID(at date: Date = Date()) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        let random = (0..<3).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        return formatter.string(from: date) + "-" + random
    }
}
