import Flow
import FlowWire
import Foundation
import Testing

/// Numbers that come from outside (a header, a store's XML, a peer, a flow file) reach integer
/// conversions that trap past their range (issue 46 item 1): each conversion saturates instead.
@Suite struct OutsideNumberTests {
    @Test("a failure that asked to wait longer than milliseconds can count still becomes a RESULT")
    func anEndlessRetryAfterSaturatesOnTheWire() throws {
        let task = WireTask(taskID: 9, op: "UploadFileOp", groupElement: .integer(1), elementIndex: 0)
        for (wait, expected) in [(Duration.seconds(99_999_999_999_999_999), UInt64.max), (.seconds(Int64.max), .max),
                                 (.milliseconds(1500), 1500), (.microseconds(499), 0), (.seconds(-3), 0)] {
            var result = FlowTaskResult(operationName: "UploadFileOp", state: .withError("503"), events: [], bucket: [:],
                                        startedAt: Date(), finishedAt: Date())
            result.retryAfter = wait
            let wire = WireResult(result, for: task)
            #expect(wire.retryAfterMilliseconds == expected, "\(wait)")
            guard case .result(let decoded) = try WireCodec.decode(WireCodec.encode(.result([wire]))), let first = decoded.first else {
                Issue.record("not a RESULT")
                continue
            }
            let back = FlowTaskResult(wire: first, for: task, worker: "w1")
            let kept: Duration? = expected == 0 ? nil : .milliseconds(Int64(clamping: expected))
            #expect(back.retryAfter == kept)
        }
    }

    @Test func saturatingConversionsClampInsteadOfTrapping() {
        #expect(FlowSaturating.int64(.nan) == 0)
        #expect(FlowSaturating.int64(.infinity) == .max && FlowSaturating.int64(-.infinity) == .min)
        #expect(FlowSaturating.int64(1e300) == .max && FlowSaturating.int64(-1e300) == .min)
        #expect(FlowSaturating.int64(9_223_372_036_854_775_807.0) == .max, "2^63 itself does not fit")
        #expect(FlowSaturating.int64(2.5) == 3 && FlowSaturating.int64(-2.4) == -2)
        #expect(FlowSaturating.uint64(1e20) == .max && FlowSaturating.uint64(-1) == 0 && FlowSaturating.uint64(.nan) == 0)
        #expect(FlowSaturating.uint64(41.6) == 42)
        #expect(FlowSaturating.milliseconds(.seconds(Int64.max)) == .max)
        #expect(FlowSaturating.milliseconds(.seconds(18_446_744_073_709_551)) == 18_446_744_073_709_551_000)
        #expect(FlowSaturating.milliseconds(.nanoseconds(1_500_000)) == 2)
    }

    @Test("a time limit message and a retry policy on the wire take any duration")
    func longDurationsInMessagesAndPolicies() throws {
        #expect(FlowTimeLimitExceeded(limit: .seconds(Int64.max)).description.hasPrefix("time limit of "))
        let policy = FlowRetryPolicy(attempts: 3, delay: .seconds(Int64.max / 2), maxDelay: .seconds(Int64.max))
        let wire = try #require(WireRetryPolicy(policy))
        #expect(wire.delayMilliseconds == .max && wire.maxDelayMilliseconds == .max)
    }
}
