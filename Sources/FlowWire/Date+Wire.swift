import Foundation

extension Date {
    /// Seconds from 1970-01-01 to 2001-01-01, the reference date `Date` counts from.
    private static let secondsFrom1970ToReferenceDate: Int64 = 978_307_200

    /// The date as the wire carries it: whole microseconds since 1970-01-01T00:00:00Z, rounded to
    /// the nearest microsecond.
    ///
    /// Dates beyond what an Int64 of microseconds holds (about ±292,000 years) are clamped; NaN
    /// becomes 0.
    package var wireMicroseconds: Int64 {
        let interval = timeIntervalSinceReferenceDate
        guard interval.isFinite else {
            if interval.isNaN { return 0 }
            return interval > 0 ? .max : .min
        }
        // Whole seconds and fraction separately: the fraction of a Double is exact, and rounding
        // it alone keeps microseconds for any date a Double can resolve them in.
        let whole = interval.rounded(.down)
        let microseconds = Int64(((interval - whole) * 1_000_000).rounded())
        let limit = Double(Int64.max / 1_000_000)
        guard whole > -limit, whole < limit else { return whole > 0 ? .max : .min }
        let seconds = Int64(whole) + Self.secondsFrom1970ToReferenceDate
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return seconds > 0 ? .max : .min }
        let (total, overflowAdding) = scaled.addingReportingOverflow(microseconds)
        guard !overflowAdding else { return .max }
        return total
    }

    /// Creates the date a wire timestamp stands for.
    ///
    /// - Parameter wireMicroseconds: microseconds since 1970-01-01T00:00:00Z.
    package init(wireMicroseconds: Int64) {
        var seconds = wireMicroseconds / 1_000_000
        var microseconds = wireMicroseconds % 1_000_000
        if microseconds < 0 {
            seconds -= 1
            microseconds += 1_000_000
        }
        let referenceSeconds = seconds - Self.secondsFrom1970ToReferenceDate
        self.init(timeIntervalSinceReferenceDate: Double(referenceSeconds) + Double(microseconds) / 1_000_000)
    }
}
