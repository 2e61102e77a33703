/// The ranges of the numbers a flow file, a schedule and `flow-coordinator limit` give that end up
/// as whole numbers (nanoseconds to wait, thousandths of a request on the wire, slots to fill).
///
/// Outside them a value is refused where it is read, naming the value and the range, rather than
/// trapping the coordinator later (`requestsPerSecond: 1e-10` once made every token wait 10^19
/// nanoseconds, past `Int64`, and `run` and every `resume` died with no message). The conversions
/// themselves saturate too, for a value that comes another way (the library's API, a peer).
package enum FlowNumberRange {
    /// Requests (op starts) a second: a thousandth, the wire's unit (PROTOCOL.md §15), to a million.
    package static let requestsPerSecond: ClosedRange<Double> = 0.001...1_000_000
    /// Bytes a second: 1 B/s to 1 TiB/s.
    package static let bytesPerSecond: ClosedRange<Int64> = 1...1_099_511_627_776
    /// A group's `maxConcurrent`.
    package static let maxConcurrent: ClosedRange<Int> = 1...100_000
    /// `retry`'s `attempts`, the first try included.
    package static let attempts: ClosedRange<Int> = 1...1000
    /// `retry`'s `backoff` factor.
    package static let backoff: ClosedRange<Double> = 1...100

    /// The requests range as messages say it.
    package static let requestsPerSecondText = "0.001 to 1000000"
    /// The bytes range as messages say it.
    package static let bytesPerSecondText = "1 B to 1 TiB"

    /// A requests rate as `limit --requests-per-second` and a schedule entry write it: a number in
    /// ``requestsPerSecond``, or `off` (`nil`).
    ///
    /// - Throws: ``FlowNumberRangeError`` naming the text and the range.
    package static func requestsPerSecond(_ text: String) throws(FlowNumberRangeError) -> Double? {
        if text.lowercased() == "off" { return nil }
        guard let number = Double(text) else {
            throw FlowNumberRangeError("'\(text.prefix(40))' is not a number of requests a second: give \(requestsPerSecondText), or off")
        }
        guard requestsPerSecond.contains(number) else {
            throw FlowNumberRangeError("\(text.prefix(40)) requests a second is out of range: give \(requestsPerSecondText) requests a second, or off")
        }
        return number
    }

    /// A bytes rate as `limit --bytes-per-second` and a schedule entry write it: a size
    /// (``FlowByteSize``) in ``bytesPerSecond``, or `off` (`nil`).
    ///
    /// - Throws: ``FlowNumberRangeError`` naming the text and the range.
    package static func bytesPerSecond(_ text: String) throws(FlowNumberRangeError) -> Int64? {
        if text.lowercased() == "off" { return nil }
        guard let bytes = FlowByteSize.parse(text) else {
            throw FlowNumberRangeError("'\(text.prefix(40))' is not a rate of bytes a second: give a size such as 512KiB or 200MiB, "
                                       + "from \(bytesPerSecondText), or off")
        }
        guard bytesPerSecond.contains(bytes) else {
            throw FlowNumberRangeError("\(text.prefix(40)) bytes a second is out of range: give \(bytesPerSecondText) (1099511627776 bytes) a second, or off")
        }
        return bytes
    }
}

/// Why a number is refused: what it is and the range it must be in, for the user.
package struct FlowNumberRangeError: Error, Sendable, CustomStringConvertible {
    package var description: String

    init(_ description: String) {
        self.description = description
    }
}
