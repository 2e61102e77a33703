import Foundation
import Testing

@testable import Flow

/// Numbers a flow file, a schedule or `limit` gives that end up as whole numbers are refused
/// outside their stated range where they are read (issue 46 item 3), and a flow file cannot
/// make composing it take exponential time through aliases used as keys (item 12).
@Suite struct FlowNumberRangeTests {
    private func group(_ lines: String) -> String {
        "flow: x\nsteps:\n  - group:\n      op: A\n      input: items\n      output: outs\n" + lines
    }

    private func diagnostics(_ text: String) -> [String] {
        do {
            _ = try FlowFileLoader().load(text: text, file: "f.yaml")
            return []
        } catch {
            return error.diagnostics.map(\.description)
        }
    }

    @Test func ratesThatTrappedTheCoordinatorAreRefusedWithTheirPlaceAndRange() {
        let requests = "requestsPerSecond must be a number of op starts a second from 0.001 to 1000000, or off"
        #expect(diagnostics(group("      limit: {requestsPerSecond: 1e-10}\n")) == ["f.yaml:7:34: \(requests), found the number 1e-10"])
        #expect(diagnostics(group("      limit: {requestsPerSecond: 1e17}\n")) == ["f.yaml:7:34: \(requests), found the number 1e17"])
        #expect(diagnostics(group("      limit: {requestsPerSecond: .inf}\n")) == ["f.yaml:7:34: \(requests), found the number .inf"])
        #expect(diagnostics(group("      limit: {bytesPerSecond: 2TiB}\n")) == [
            "f.yaml:7:31: bytesPerSecond must be a size a second from 1 B to 1 TiB (1099511627776 bytes), such as 200MiB, 512KiB "
                + "or 1000000, or off, found the text '2TiB'",
        ])
        #expect(diagnostics(group("      limit: {schedule: \"08:00,:1e300\"}\n")) == [
            "f.yaml:7:25: schedule: '08:00,:1e300': 1e300 requests a second is out of range: give 0.001 to 1000000 requests a second, or off",
        ])
        #expect(diagnostics(group("      limit: {schedule: \"08:00,:1e-10 19:00,5TiB\"}\n")) == [
            "f.yaml:7:25: schedule: '08:00,:1e-10': 1e-10 requests a second is out of range: give 0.001 to 1000000 requests a second, or off",
        ])
        #expect(diagnostics(group("      limit: {schedule: \"19:00,5TiB\"}\n")) == [
            "f.yaml:7:25: schedule: '19:00,5TiB': 5TiB bytes a second is out of range: give 1 B to 1 TiB (1099511627776 bytes) a second, or off",
        ])
    }

    @Test func theEndsOfEachRangeAreTaken() throws {
        let definition = try FlowFileLoader().load(text: group("""
                  maxConcurrent: 100000
                  retry: {attempts: 1000, backoff: 100, delay: 0, maxDelay: 1y}
                  limit: {requestsPerSecond: 0.001, bytesPerSecond: 1TiB, schedule: "08:00,1:1000000 19:00,1TiB:0.001"}

            """.replacingOccurrences(of: "1y", with: "31536000")), file: "f.yaml")
        guard case .group(let step) = definition.steps.first else { throw RangeTestError() }
        #expect(step.maxConcurrent == 100_000)
        #expect(step.retry?.attempts == 1000 && step.retry?.backoff == 100)
        #expect(step.limit?.requestsPerSecond == 0.001 && step.limit?.bytesPerSecond == 1 << 40)
        #expect(step.limit?.schedule?.entries.map(\.requests) == [.limit(1_000_000), .limit(0.001)])
        #expect(step.limit?.schedule?.entries.map(\.bytes) == [.limit(1), .limit(1 << 40)])
    }

    @Test func countsThatOverflowedTheEngineAreRefused() {
        #expect(diagnostics(group("      maxConcurrent: 9223372036854775807\n"))
                == ["f.yaml:7:22: maxConcurrent must be an integer from 1 to 100000, found the integer 9223372036854775807"])
        #expect(diagnostics(group("      retry: {attempts: 1001}\n"))
                == ["f.yaml:7:25: attempts must be an integer from 1 to 1000 (every try, the first included), found the integer 1001"])
        #expect(diagnostics(group("      retry: {attempts: 3, backoff: 1e308}\n"))
                == ["f.yaml:7:37: backoff must be from 1 (every wait the same) to 100, found the number 1e308"])
    }

    @Test func noDelayStaysNoneHoweverManyTries() {
        // 0 × 2^1100 was NaN, and the jitter's Double.random(in: 0...NaN) trapped.
        var random = SystemRandomNumberGenerator()
        let policy = FlowRetryPolicy(attempts: 1000, delay: .zero, backoff: 100)
        #expect(policy.wait(after: 999, using: &random) == .zero)
        #expect(FlowRetryPolicy(attempts: 1000, delay: .zero, backoff: 2).wait(after: 1100, using: &random) == .zero)
    }

    @Test func limitAndScheduleTextIsReadInRange() throws {
        #expect(try FlowNumberRange.requestsPerSecond("OFF") == nil)
        #expect(try FlowNumberRange.requestsPerSecond("2.5") == 2.5)
        #expect(try FlowNumberRange.bytesPerSecond("512KiB") == 512 * 1024)
        for text in ["1e-300", "0", "-1", "1000001", "nan", "inf"] {
            #expect(throws: FlowNumberRangeError.self, "\(text)") { try FlowNumberRange.requestsPerSecond(text) }
        }
        for text in ["0", "1.1TiB", "99999999999999999999", "x"] {
            #expect(throws: FlowNumberRangeError.self, "\(text)") { try FlowNumberRange.bytesPerSecond(text) }
        }
        let error = try #require(throws: FlowNumberRangeError.self) { try FlowNumberRange.requestsPerSecond("1e-300") }
        #expect(error.description == "1e-300 requests a second is out of range: give 0.001 to 1000000 requests a second, or off")
    }
}

private struct RangeTestError: Error {}
