package import Foundation

/// Durations as people write them and as the project prints them: the one parser of duration text
/// (flow files' `timeout:` and `delay:`, ListFilesOp's `newerThan`) and the one formatter of
/// durations (summary lines, cluster messages, progress lines, op logs).
package enum FlowDurationText {
    /// What `seconds(_:)` reads, for error messages: "must be \(expected), found …".
    package static let expected = "a duration like 30m, 24h, 7d, 1h30m, 90s, 500ms or 1.5 (a bare number is seconds)"

    /// The units a duration's parts may carry, in seconds.
    private static let units: [Substring: Double] = ["ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]

    /// The seconds in `45`, `1.5`, `90s`, `500ms`, `30m`, `1.5h`, `7d`, `2w` or several parts,
    /// largest first or not (`1h30m`, `2m30s`); `nil` for anything else, a negative or endless
    /// number among them. Spaces around it are ignored, spaces inside are not.
    package static func seconds(_ text: String) -> Double? {
        let text = text.trimmingCharacters(in: .whitespaces)
        if let bare = Double(text) { return bare.isFinite && bare >= 0 ? bare : nil }
        var total = 0.0
        var rest = Substring(text)
        guard !rest.isEmpty else { return nil }
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            rest = rest.dropFirst(digits.count)
            let unit = rest.prefix { $0.isASCII && $0.isLetter }
            rest = rest.dropFirst(unit.count)
            guard let amount = Double(digits), let factor = units[unit] else { return nil }
            total += amount * factor
        }
        return total.isFinite ? total : nil
    }

    /// `seconds(_:)` as a `Duration`.
    package static func parse(_ text: String) -> Duration? {
        seconds(text).map { .seconds($0) }
    }
}

extension FlowDurationText {
    /// `0.4 s`, `12 s`, `1.5 s`: whole seconds without a fraction, under 10 s to the tenth, above
    /// to the second (summary lines, retry waits).
    package static func short(_ duration: Duration) -> String {
        let value = duration.seconds
        if value == value.rounded() { return "\(Int(value)) s" }
        return String(format: value < 10 ? "%.1f s" : "%.0f s", value)
    }

    /// `1.5 s`, `30.0 s`: always to the tenth (cluster messages: a silence, a wait).
    package static func tenths(_ duration: Duration) -> String {
        String(format: "%.1f s", duration.seconds)
    }

    /// `5s`, `2m3s`, `1h2m`: a time left on a progress line, rounded up under a minute.
    package static func compact(seconds: Double) -> String {
        if seconds < 60 { return String(format: "%.0fs", seconds.rounded(.up)) }
        if seconds < 3600 { return "\(Int(seconds) / 60)m\(Int(seconds) % 60)s" }
        return "\(Int(seconds) / 3600)h\((Int(seconds) % 3600) / 60)m"
    }

    /// A number of seconds as the user wrote it, without a unit: `60`, `0.5`.
    package static func limit(_ seconds: Double) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int(seconds)) : String(seconds)
    }

    /// The seconds since `start`, to the hundredth, without a unit: `0.12`.
    package static func elapsed(since start: Date) -> String {
        String(format: "%.2f", Date().timeIntervalSince(start))
    }
}
