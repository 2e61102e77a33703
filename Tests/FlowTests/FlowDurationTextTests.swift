import Foundation
import Testing

@testable import Flow

@Suite struct FlowDurationTextTests {
    @Test func readsBareSecondsUnitsAndSeveralParts() {
        let cases: [(String, Double)] = [
            ("45", 45), ("1.5", 1.5), ("0", 0), (" 30 ", 30),
            ("90s", 90), ("500ms", 0.5), ("30m", 1_800), ("1.5h", 5_400), ("24h", 86_400), ("7d", 604_800), ("2w", 1_209_600),
            ("1h30m", 5_400), ("2m30s", 150), ("1m500ms", 60.5), ("30s1h", 3_630),
        ]
        for (text, seconds) in cases {
            #expect(FlowDurationText.seconds(text) == seconds, "\(text)")
        }
        #expect(FlowDurationText.parse("1h30m") == .seconds(5_400))
        #expect(FlowDurationText.parse("250ms") == .milliseconds(250))
    }

    @Test func refusesWhatIsNoDuration() {
        for text in ["", "s", "m5", "-5", "-5m", "5 m", "1h 30m", "5x", "5M", "1:30", "1.2.3s", "inf", "nan", "never", "٣s", "5mss"] {
            #expect(FlowDurationText.seconds(text) == nil, "\(text)")
        }
    }

    @Test func formatsEachStyleAsItsCallersPrintIt() {
        #expect(FlowDurationText.short(.seconds(12)) == "12 s")
        #expect(FlowDurationText.short(.milliseconds(400)) == "0.4 s")
        #expect(FlowDurationText.short(.milliseconds(12_400)) == "12 s")
        #expect(FlowDurationText.tenths(.seconds(30)) == "30.0 s")
        #expect(FlowDurationText.tenths(.milliseconds(1_540)) == "1.5 s")
        #expect(FlowDurationText.compact(seconds: 4.2) == "5s")
        #expect(FlowDurationText.compact(seconds: 123) == "2m3s")
        #expect(FlowDurationText.compact(seconds: 3_720) == "1h2m")
        #expect(FlowDurationText.limit(60) == "60")
        #expect(FlowDurationText.limit(0.5) == "0.5")
        #expect(FlowDurationText.elapsed(since: Date()).hasPrefix("0.0"))
    }

    @Test func flowFileTimeoutsAndDelaysTakeDurationText() throws {
        let definition = try FlowFileLoader().load(text: """
            flow: units
            steps:
              - op: A
                timeout: 5m
                retry: {attempts: 3, delay: 500ms, maxDelay: "1m30s"}
              - group: {op: B, input: i, output: o, timeout: 1h30m}
            """, file: "f.yaml")
        guard case .operation(let step) = definition.steps.first, case .group(let group) = definition.steps.last else {
            Issue.record("unexpected steps: \(definition.steps)")
            return
        }
        #expect(step.timeout == .seconds(300))
        #expect(step.retry?.delay == .milliseconds(500))
        #expect(step.retry?.maxDelay == .seconds(90))
        #expect(group.timeout == .seconds(5_400))
    }

    @Test func aFlowFileDurationOutOfRangeSaysItsBounds() throws {
        let error = try #require(throws: FlowFileError.self) {
            try FlowFileLoader().load(text: "flow: x\nsteps:\n  - op: A\n    timeout: 0s\n", file: "f.yaml")
        }
        #expect(error.diagnostics.map(\.description)
                == ["f.yaml:4:14: timeout must be a number of seconds above 0 (at most a year), found the text '0s'"])
    }
}
