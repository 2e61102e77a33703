package import Flow

/// A step's `retry:` as a TASK carries it (flags bit 2, PROTOCOL.md §7.2), for ops that retry
/// parts of their work alone.
package struct WireRetryPolicy: Sendable, Hashable {
    /// Tries in all, at least 2 (a policy of one try is not sent).
    package var attempts: UInt32
    /// The wait before the second try, in milliseconds.
    package var delayMilliseconds: UInt32
    /// The factor each further wait grows by, at least 1.
    package var backoff: Double
    /// The longest wait, in milliseconds.
    package var maxDelayMilliseconds: UInt32
    /// Whether waits are jittered.
    package var jitter: Bool

    /// The policy's wire form, or `nil` for a policy of one try.
    package init?(_ policy: FlowRetryPolicy) {
        guard policy.attempts > 1 else { return nil }
        attempts = UInt32(clamping: policy.attempts)
        delayMilliseconds = UInt32(clamping: FlowSaturating.milliseconds(policy.delay))
        backoff = policy.backoff
        maxDelayMilliseconds = UInt32(clamping: FlowSaturating.milliseconds(policy.maxDelay))
        jitter = policy.jitter
    }

    /// The policy the op sees.
    package var policy: FlowRetryPolicy {
        FlowRetryPolicy(attempts: Int(attempts), delay: .milliseconds(Int64(delayMilliseconds)), backoff: backoff,
                        maxDelay: .milliseconds(Int64(maxDelayMilliseconds)), jitter: jitter)
    }

    /// Appends the fields in spec order.
    package func write(to writer: inout WireWriter) {
        writer.writeUInt32(attempts)
        writer.writeUInt32(delayMilliseconds)
        writer.writeFloat64(backoff)
        writer.writeUInt32(maxDelayMilliseconds)
        writer.writeUInt8(jitter ? 1 : 0)
    }

    /// Reads the fields in spec order.
    ///
    /// - Throws: on fewer than 2 attempts, a backoff below 1 or not finite, or a jitter byte
    ///   other than 0 or 1.
    package init(reading reader: inout WireReader) throws(WireDecodingError) {
        let start = reader.offset
        attempts = try reader.readUInt32("retry attempts")
        guard attempts >= 2 else {
            throw WireDecodingError(.invalidField, offset: start, "retry attempts: \(attempts), but flags bit 2 says at least 2")
        }
        delayMilliseconds = try reader.readUInt32("retry delay")
        let backoffStart = reader.offset
        backoff = try reader.readFloat64("retry backoff")
        guard backoff.isFinite, backoff >= 1 else {
            throw WireDecodingError(.invalidField, offset: backoffStart, "retry backoff: \(backoff), must be a finite number at least 1")
        }
        maxDelayMilliseconds = try reader.readUInt32("retry max delay")
        let jitterStart = reader.offset
        let jitterByte = try reader.readUInt8("retry jitter")
        guard jitterByte <= 1 else {
            throw WireDecodingError(.invalidField, offset: jitterStart, "retry jitter: \(jitterByte), must be 0 or 1")
        }
        jitter = jitterByte == 1
    }
}
