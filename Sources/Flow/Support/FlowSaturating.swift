/// Integer conversions that cannot trap, for numbers that come from outside: an HTTP header, a
/// store's XML, a peer's message, a flow file. `Int64(someDouble)` traps on NaN, on infinity and
/// past the type's range; one `Retry-After: 99999999999999999` once killed every worker that read
/// it. These clamp instead: NaN is 0, anything past a bound is the bound.
package enum FlowSaturating {
    /// `value` rounded to the nearest whole number, clamped to `Int64`'s range (NaN is 0).
    package static func int64(_ value: Double) -> Int64 {
        guard !value.isNaN else { return 0 }
        // 2^63 is exactly representable; every Double below it converts.
        if value >= 9_223_372_036_854_775_808.0 { return .max }
        if value < -9_223_372_036_854_775_808.0 { return .min }
        return Int64(value.rounded())
    }

    /// `value` rounded to the nearest whole number, clamped to `UInt64`'s range (NaN and
    /// negatives are 0).
    package static func uint64(_ value: Double) -> UInt64 {
        guard !value.isNaN, value > 0 else { return 0 }
        if value >= 18_446_744_073_709_551_616.0 { return .max }
        return UInt64(value.rounded())
    }

    /// `duration` in whole milliseconds, rounded to the nearest, 0 for a negative duration and
    /// `UInt64.max` for one too long to count so.
    package static func milliseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let (scaled, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1000)
        guard !overflow else { return .max }
        let (total, overflowAdding) = scaled.addingReportingOverflow(UInt64((attoseconds + 500_000_000_000_000) / 1_000_000_000_000_000))
        return overflowAdding ? .max : total
    }
}
