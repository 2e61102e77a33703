import Foundation
import Yams

extension FlowFileReader {
    /// The keys a `retry:` map may have.
    static let retryKeys = ["attempts", "delay", "backoff", "maxDelay", "jitter"]
    /// The keys `defaults:` may have.
    static let defaultsKeys = ["retry", "timeout"]

    /// `retry: {attempts, delay, backoff, maxDelay, jitter}`; only `attempts` is required.
    mutating func readRetry(_ node: Yams.Node) -> FlowRetryPolicy? {
        guard case .mapping(let mapping) = node else {
            report("retry must be a map such as {attempts: 5, delay: 1, backoff: 2, maxDelay: 60, jitter: true}, "
                   + "found \(Self.describe(node))", at: node)
            return nil
        }
        let fields = fields(of: mapping, allowed: Self.retryKeys, in: "retry")
        var failed = false
        var attempts: Int?
        if let value = fields["attempts"] {
            if case .scalar(let scalar) = value, Self.tagName(of: value) == .int, let number = Self.integer(scalar),
               FlowNumberRange.attempts.contains(number) {
                attempts = number
            } else {
                let range = FlowNumberRange.attempts
                report("attempts must be an integer from \(range.lowerBound) to \(range.upperBound) (every try, the first included), "
                       + "found \(Self.describe(value))", at: value)
                failed = true
            }
        } else {
            report("retry has no attempts: add 'attempts: <tries in all, the first included>'", at: node)
        }
        var policy = FlowRetryPolicy(attempts: attempts ?? 1)
        if let value = fields["delay"] {
            if let seconds = readSeconds("delay", value, allowZero: true) { policy.delay = .seconds(seconds) } else { failed = true }
        }
        if let value = fields["backoff"] {
            if let factor = readNumber("backoff", value, meaning: "the factor each wait grows by") {
                if FlowNumberRange.backoff.contains(factor) {
                    policy.backoff = factor
                } else {
                    report("backoff must be from 1 (every wait the same) to 100, found \(Self.describe(value))", at: value)
                    failed = true
                }
            } else {
                failed = true
            }
        }
        if let value = fields["maxDelay"] {
            if let seconds = readSeconds("maxDelay", value, allowZero: true) { policy.maxDelay = .seconds(seconds) } else { failed = true }
        }
        if let value = fields["jitter"] {
            if case .scalar(let scalar) = value, Self.tagName(of: value) == .bool, let flag = FlowCoreSchema.bool(scalar.string) {
                policy.jitter = flag
            } else {
                report("jitter must be true or false, found \(Self.describe(value))", at: value)
                failed = true
            }
        }
        return attempts == nil || failed ? nil : policy
    }

    /// `timeout: SECONDS`, more than 0.
    mutating func readTimeout(_ node: Yams.Node) -> Duration? {
        readSeconds("timeout", node, allowZero: false).map { .seconds($0) }
    }

    /// `affinityTimeout: SECONDS`, more than 0.
    mutating func readAffinityTimeout(_ node: Yams.Node) -> Duration? {
        readSeconds("affinityTimeout", node, allowZero: false).map { .seconds($0) }
    }

    /// `maxFailures: N` (elements) or `maxFailures: "P%"` (of the group's elements).
    mutating func readMaxFailures(_ node: Yams.Node) -> FlowFailureBudget? {
        if case .scalar(let scalar) = node {
            switch Self.tagName(of: node) {
            case .int:
                if let count = Self.integer(scalar), count >= 0 { return .count(count) }
            case .str where scalar.string.hasSuffix("%"):
                let number = scalar.string.dropLast().trimmingCharacters(in: .whitespaces)
                if let percent = Double(number), percent >= 0, percent <= 100 { return .percent(percent) }
            default:
                break
            }
        }
        report("maxFailures must be a count of elements (an integer of at least 0) or a percentage such as \"2%\", "
               + "found \(Self.describe(node))", at: node)
        return nil
    }

    /// `defaults: {retry, timeout}`, applied to every op step and group that sets none.
    mutating func readDefaults(_ node: Yams.Node) -> FlowStepDefaults? {
        guard case .mapping(let mapping) = node else {
            report("defaults must be a map with 'retry' and/or 'timeout', found \(Self.describe(node))", at: node)
            return nil
        }
        let fields = fields(of: mapping, allowed: Self.defaultsKeys, in: "defaults")
        var defaults = FlowStepDefaults()
        var failed = false
        if let value = fields["retry"] {
            if let retry = readRetry(value) { defaults.retry = retry } else { failed = true }
        }
        if let value = fields["timeout"] {
            if let timeout = readTimeout(value) { defaults.timeout = timeout } else { failed = true }
        }
        return failed ? nil : defaults
    }

    /// A number of seconds (an integer or a decimal) or a duration with units (`30s`, `5m`,
    /// `1h30m`, `FlowDurationText.seconds(_:)`), at least 0 (or above 0) and at most a year.
    private mutating func readSeconds(_ name: String, _ node: Yams.Node, allowZero: Bool) -> Double? {
        let seconds: Double
        if let number = readNumberQuietly(node) {
            seconds = number
        } else if case .scalar(let scalar) = node, Self.tagName(of: node) == .str, let text = FlowDurationText.seconds(scalar.string) {
            seconds = text
        } else {
            report("\(name) must be \(FlowDurationText.expected), found \(Self.describe(node))", at: node)
            return nil
        }
        guard seconds.isFinite, allowZero ? seconds >= 0 : seconds > 0, seconds <= 31_536_000 else {
            report("\(name) must be a number of seconds \(allowZero ? "of at least 0" : "above 0") (at most a year), "
                   + "found \(Self.describe(node))", at: node)
            return nil
        }
        return seconds
    }

    /// An integer or decimal number.
    private mutating func readNumber(_ name: String, _ node: Yams.Node, meaning: String) -> Double? {
        if let number = readNumberQuietly(node) { return number }
        report("\(name) must be a number (\(meaning)), found \(Self.describe(node))", at: node)
        return nil
    }

    private func readNumberQuietly(_ node: Yams.Node) -> Double? {
        guard case .scalar(let scalar) = node else { return nil }
        switch Self.tagName(of: node) {
        case .int, .float: return FlowCoreSchema.double(scalar.string)
        default: return nil
        }
    }
}
