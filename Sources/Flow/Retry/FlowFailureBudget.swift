/// How many of a group's elements may fail (after their retries) while the group still succeeds
/// (`maxFailures: 10` or `maxFailures: "2%"`). One failure more fails the group as
/// `allowFailure: false` does.
public enum FlowFailureBudget: Sendable, Hashable, CustomStringConvertible {
    /// At most this many elements.
    case count(Int)
    /// At most this percentage of the group's elements, rounded down.
    case percent(Double)

    /// The most elements of a group of `total` that may fail.
    public func limit(total: Int) -> Int {
        switch self {
        case .count(let count): return max(0, count)
        case .percent(let percent): return Int((Double(total) * max(0, percent) / 100).rounded(.down))
        }
    }

    public var description: String {
        switch self {
        case .count(let count): return "\(count)"
        case .percent(let percent):
            return (percent == percent.rounded() ? "\(Int(percent))" : "\(percent)") + "%"
        }
    }
}
