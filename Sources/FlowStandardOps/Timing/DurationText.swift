import Foundation

/// How the stock ops print durations in their log lines and errors.
enum DurationText {
    /// A limit as the user wrote it: `60`, `0.5`.
    static func limit(_ seconds: Double) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int(seconds)) : String(seconds)
    }

    /// The time since `start`, to the hundredth of a second: `0.12`.
    static func elapsed(since start: Date) -> String {
        String(format: "%.2f", Date().timeIntervalSince(start))
    }
}
