#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import Foundation

/// The seed's summary time stamp, `4:17:18 PM`: the hour on a 12-hour clock without a leading
/// zero, minutes and seconds with two digits, then `AM` or `PM`; fractions of a second are cut.
///
/// It is formatted with the C library rather than a `DateFormatter`, with the same text. A
/// formatter's first use loads ICU's locale and calendar data, which cost every
/// `flow-coordinator run` 2-5 ms (measured) for a stamp that needs none of it.
public struct FlowSummaryTimeStamp: Sendable {
    private let timeZone: TimeZone?

    /// A stamp in `timeZone`.
    ///
    /// - Parameter timeZone: the zone the time is shown in; `nil`: the local one, as the C library
    ///   reads it (`TZ`, else `/etc/localtime`), which is where `TimeZone.current` looks too.
    public init(timeZone: TimeZone? = nil) {
        self.timeZone = timeZone
    }

    /// The stamp of `date`.
    public func string(from date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        if let timeZone {
            seconds += time_t(timeZone.secondsFromGMT(for: date))
            gmtime_r(&seconds, &parts)
        } else {
            localtime_r(&seconds, &parts)
        }
        let hour = parts.tm_hour % 12 == 0 ? 12 : parts.tm_hour % 12
        return "\(hour):\(Self.twoDigits(parts.tm_min)):\(Self.twoDigits(parts.tm_sec)) \(parts.tm_hour < 12 ? "AM" : "PM")"
    }

    private static func twoDigits(_ value: Int32) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}
