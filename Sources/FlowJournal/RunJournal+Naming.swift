import FlowWire
public import Foundation

extension RunJournal {
    /// The folder journals go to by default: `$XDG_STATE_HOME/flow/runs`, or
    /// `~/.local/state/flow/runs` when it is unset.
    public static func defaultFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/flow/runs" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.local/state/flow/runs"
    }

    /// A new run id: the start time (UTC) and a random part (`20261123-075930-3f2a9c`), sortable
    /// by time.
    ///
    /// Formatted with `gmtime_r`, not a `DateFormatter`: the formatter's first use loads ICU's
    /// locale and calendar data, about 6 ms of every run's start before its workers are spawned.
    public static func newRunID(at date: Date = Date()) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func padded(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let day = padded(parts.tm_year + 1900, 4) + padded(parts.tm_mon + 1, 2) + padded(parts.tm_mday, 2)
        let time = padded(parts.tm_hour, 2) + padded(parts.tm_min, 2) + padded(parts.tm_sec, 2)
        let random = (0..<3).map { _ in UInt8.random(in: 0...255).hexDigits }.joined()
        return day + "-" + time + "-" + random
    }
}
