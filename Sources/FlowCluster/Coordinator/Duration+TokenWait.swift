extension Duration {
    /// The longest wait a token bucket says: whoever waits looks at the bucket again by then.
    static let longestTokenWait = Duration.seconds(3600)

    /// A token bucket's wait of `seconds`, rounded up to the nanosecond, and at most
    /// ``longestTokenWait``: a tiny rate (a peer's RATE, a library caller's limit) must never make
    /// `Int64(nanoseconds)` trap, as `requestsPerSecond: 1e-10` once did (10^19 ns); NaN is the
    /// longest wait too.
    static func tokenWait(seconds: Double) -> Duration {
        guard !seconds.isNaN else { return longestTokenWait }
        guard seconds > 0 else { return .zero }
        guard seconds < 3600 else { return longestTokenWait }
        return .nanoseconds(Int64((seconds * 1e9).rounded(.up)))
    }
}
