import Foundation
import Testing
@testable import Flow

private struct ReportTestFailure: Error, CustomStringConvertible {
    let item: String
    var description: String { "failed on \(item)" }
}

/// Printed as itself: has no FlowValue form, so the report keeps its description.
private final class OpaqueThing: CustomStringConvertible, @unchecked Sendable {
    var description: String { "opaque#7" }
}

private func reportRegistry() -> FlowOperationRegistry {
    var registry = FlowOperationRegistry()
    registry.register("EchoOp", primaryInputParamKey: "item", primaryOutputParamKey: "result") { _ in
        FlowClosureOperation(name: "EchoOp", primaryInputParamKey: "item", primaryOutputParamKey: "result") { op in
            let item = try op.value("item", as: String.self)
            if item.hasPrefix("fail") { throw ReportTestFailure(item: item) }
            op.set("result", "out_" + item)
        }
    }
    registry.register("SayOp") { parameters in
        let message = try parameters.string("message", default: "")
        return FlowClosureOperation(name: "SayOp") { op in op.log(message: message) }
    }
    registry.register("NeedsOp") { _ in
        FlowClosureOperation(name: "NeedsOp") { op in _ = try op.value("missing", as: String.self) }
    }
    return registry
}

/// Runs the flow and returns its report's JSON, decoded.
private func runAndReport(_ flow: Flow) async throws -> (report: FlowRunReport, json: [String: Any]) {
    let startedAt = Date()
    await flow.run()
    let report = FlowRunReport(flow: flow, startedAt: startedAt, finishedAt: Date())
    let json = try #require(try JSONSerialization.jsonObject(with: report.jsonData()) as? [String: Any])
    return (report, json)
}

private func date(_ value: Any?) -> Date? {
    guard let text = value as? String else { return nil }
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.date(from: text)
}

private func operations(_ json: [String: Any]) -> [[String: Any]] {
    json["operations"] as? [[String: Any]] ?? []
}

@Suite struct FlowRunReportTests {
    @Test func reportOfARunHoldsBucketOperationsTimesAndSummary() async throws {
        let flow = Flow(definition: FlowDefinition(name: "report-demo", steps: [
            .operation(FlowOperationStep(op: "SayOp", parameters: ["message": "hello"])),
            .group(FlowGroupStep(op: "EchoOp", input: "items", output: "results", maxConcurrent: 2)),
        ]), registry: reportRegistry())
        flow.setDataBucket(dataBucket: ["items": ["x", "y", "z"], "count": 3, "ratio": 0.5])
        let (report, json) = try await runAndReport(flow)

        #expect(json["flow"] as? String == "report-demo")
        #expect(json["isSuccess"] as? Bool == true)
        #expect(json["error"] is NSNull)
        #expect(Set(json.keys) == ["flow", "isSuccess", "error", "startedAt", "finishedAt", "durationSeconds", "bucket",
                                   "operations", "groups", "summary"])
        let bucket = try #require(json["bucket"] as? [String: Any])
        #expect(bucket["items"] as? [String] == ["x", "y", "z"])
        #expect(bucket["results"] as? [String] == ["out_x", "out_y", "out_z"])
        #expect(bucket["count"] as? Int == 3)
        #expect(bucket["ratio"] as? Double == 0.5)

        let startedAt = try #require(date(json["startedAt"]))
        let finishedAt = try #require(date(json["finishedAt"]))
        #expect(startedAt <= finishedAt)
        let duration = try #require(json["durationSeconds"] as? Double)
        #expect(abs(duration - report.finishedAt.timeIntervalSince(report.startedAt)) < 0.000_001)

        let entries = operations(json)
        #expect(entries.count == 4)
        let say = try #require(entries.first { $0["op"] as? String == "SayOp" })
        #expect(Set(say.keys) == ["op", "tag", "groupIndex", "groupOutputKey", "worker", "startedAt", "finishedAt",
                                  "durationSeconds", "state", "error", "logLines", "location", "attempt", "attempts"])
        #expect(say["groupIndex"] is NSNull)
        #expect(say["tag"] is NSNull)
        #expect(say["worker"] is NSNull)
        #expect(say["location"] is NSNull)
        #expect(say["state"] as? String == "successfully")
        #expect(say["error"] is NSNull)
        let logLines = try #require(say["logLines"] as? [[String: Any]])
        #expect(logLines.map { $0["text"] as? String } == ["hello"])
        #expect(date(logLines.first?["time"]) != nil)
        for index in 0..<3 {
            let matching = entries.filter { $0["op"] as? String == "EchoOp" && $0["groupIndex"] as? Int == index }
            #expect(matching.count == 1, "group element \(index)")
            #expect(matching.first?["groupOutputKey"] as? String == "results")
            #expect(matching.first?["tag"] is String)
            #expect(matching.first?["state"] as? String == "successfully")
        }
        for entry in entries {
            let opStarted = try #require(date(entry["startedAt"]))
            let opFinished = try #require(date(entry["finishedAt"]))
            #expect(opStarted <= opFinished)
            // Millisecond stamps: allow for the rounding at either end.
            #expect(opStarted >= startedAt.addingTimeInterval(-0.001) && opFinished <= finishedAt.addingTimeInterval(0.001))
            #expect((entry["durationSeconds"] as? Double ?? -1) >= 0)
        }
        let groups = try #require(json["groups"] as? [[String: Any]])
        #expect(groups.count == 1)
        #expect(groups.first?["op"] as? String == "EchoOp")
        #expect(groups.first?["outputKey"] as? String == "results")
        #expect(groups.first?["total"] as? Int == 3)
        #expect(groups.first?["succeeded"] as? Int == 3)
        #expect(groups.first?["failed"] as? Int == 0)

        let summary = try #require(json["summary"] as? String)
        #expect(summary == flow.generateSummary())
        #expect(summary.contains("Flow isSuccess: true"))
        #expect(summary.contains("[SayOp] hello"))
    }

    @Test func everyGroupElementAppearsOnceWithItsIndexAndTheFailedOneHasItsError() async throws {
        let flow = Flow(definition: FlowDefinition(name: "partly", steps: [
            .group(FlowGroupStep(op: "EchoOp", input: "items", output: "results", maxConcurrent: 3, allowFailure: true)),
        ]), registry: reportRegistry())
        flow.setDataBucket(dataBucket: ["items": ["a", "fail_b", "c"]])
        let (_, json) = try await runAndReport(flow)

        let entries = operations(json)
        #expect(entries.count == 3)
        #expect(entries.compactMap { $0["groupIndex"] as? Int }.sorted() == [0, 1, 2])
        let failed = try #require(entries.first { $0["groupIndex"] as? Int == 1 })
        #expect(failed["state"] as? String == "withError")
        #expect(failed["error"] as? String == "failed on fail_b")
        for entry in entries where entry["groupIndex"] as? Int != 1 {
            #expect(entry["state"] as? String == "successfully")
            #expect(entry["error"] is NSNull)
        }
        let groups = try #require(json["groups"] as? [[String: Any]])
        #expect(groups.first?["succeeded"] as? Int == 2)
        #expect(groups.first?["failed"] as? Int == 1)
    }

    @Test func failingFlowStillProducesAReportWithItsErrorAndWritesIt() async throws {
        let flow = Flow(definition: FlowDefinition(name: "failing", steps: [
            .operation(FlowOperationStep(op: "SayOp", parameters: ["message": "before"])),
            .group(FlowGroupStep(op: "EchoOp", input: "items", output: "results", maxConcurrent: 1)),
            .operation(FlowOperationStep(op: "SayOp", parameters: ["message": "never"])),
        ]), registry: reportRegistry())
        flow.setDataBucket(dataBucket: ["items": ["fail_only"]])
        let (report, json) = try await runAndReport(flow)

        #expect(json["isSuccess"] as? Bool == false)
        #expect((json["error"] as? String)?.contains("failed on fail_only") == true)
        let entries = operations(json)
        #expect(entries.map { $0["op"] as? String } == ["SayOp", "EchoOp"])
        #expect(entries.last?["state"] as? String == "withError")
        #expect(entries.last?["error"] as? String == "failed on fail_only")
        #expect((json["summary"] as? String)?.contains("Flow isSuccess: false") == true)

        let path = FileManager.default.temporaryDirectory.appendingPathComponent("flow-report-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try report.write(to: path)
        let written = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(written == (try report.jsonData()))
        #expect(String(decoding: written, as: UTF8.self).contains("\n  \"bucket\" : {"))
    }

    @Test func missingInputIsReportedAsInsufficientInputData() async throws {
        let flow = Flow(definition: FlowDefinition(name: "needs", steps: [.operation(FlowOperationStep(op: "NeedsOp"))]),
                        registry: reportRegistry())
        let (_, json) = try await runAndReport(flow)
        let entry = try #require(operations(json).first)
        #expect(entry["state"] as? String == "withInsufficientInputData")
        #expect((entry["error"] as? String)?.contains("missing") == true)
        #expect(json["isSuccess"] as? Bool == false)
    }

    @Test func operationsFromAFlowFileCarryTheirLocation() async throws {
        let text = """
            flow: located
            steps:
              - op: SayOp
                with: {message: here}
            """
        let definition = try FlowFileLoader().load(text: text, file: "located.yaml")
        let expected = try #require(definition.steps.first?.location).description
        let (_, json) = try await runAndReport(Flow(definition: definition, registry: reportRegistry()))
        #expect(expected.hasPrefix("located.yaml:"))
        #expect(operations(json).first?["location"] as? String == expected)
    }

    @Test func aWrittenReportIsJSONDataByteForByteAlsoWithLongTextsWrittenApart() throws {
        // Every byte JSON escapes, and text on either side of the long-text threshold.
        let specials = String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self) + "é\u{1F600}\u{FFFF}\"\\/"
        let long = String(repeating: specials, count: (FlowRunReport.streamedTextLength / specials.utf8.count) + 2)
        let flow = Flow().setDataBucket(dataBucket: [
            "long": long, "short": specials, "list": [long, "x", ["k": long]], "edge": String(repeating: "a", count: FlowRunReport.streamedTextLength),
            "lookalike": "\u{FFFF}flow-long-text:0\u{FFFF}", "lookalike2": "\u{FFFF}flow-long-text-1:0\u{FFFF}",
        ])
        let report = FlowRunReport(flow: flow, startedAt: Date(timeIntervalSince1970: 0), finishedAt: Date(timeIntervalSince1970: 1))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("report-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("report.json").path
        try Data("old".utf8).write(to: URL(fileURLWithPath: path))
        try report.write(to: path)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == report.jsonData())
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["report.json"], "a temporary file was left")
    }

    @Test func bucketValuesAreEncodedNaturallyAndTaggedWhenJSONHasNoForm() throws {
        let flow = Flow().setDataBucket(dataBucket: [
            "text": "t", "int": 42, "double": 1.5, "flag": false, "nothing": NSNull(),
            "list": [1, "two", [true]], "map": ["k": ["n": 1]],
            "blob": Data([1, 2, 3]), "when": Date(timeIntervalSince1970: 1.25), "notANumber": Double.nan,
            "custom": OpaqueThing(), "mixed": [OpaqueThing()],
        ])
        let report = FlowRunReport(flow: flow, startedAt: Date(timeIntervalSince1970: 0), finishedAt: Date(timeIntervalSince1970: 2.5))
        let json = try #require(try JSONSerialization.jsonObject(with: report.jsonData()) as? [String: Any])
        let bucket = try #require(json["bucket"] as? [String: Any])
        #expect(bucket["text"] as? String == "t")
        #expect(bucket["int"] as? Int == 42)
        #expect(bucket["double"] as? Double == 1.5)
        #expect(bucket["flag"] as? Bool == false)
        #expect(bucket["nothing"] is NSNull)
        let list = try #require(bucket["list"] as? [Any])
        #expect(list.count == 3 && list[0] as? Int == 1 && list[1] as? String == "two" && list[2] as? [Bool] == [true])
        #expect((bucket["map"] as? [String: [String: Int]]) == ["k": ["n": 1]])
        #expect(bucket["blob"] as? [String: String] == ["$bytes": "AQID"])
        #expect(bucket["when"] as? String == "1970-01-01T00:00:01.250Z")
        #expect(bucket["notANumber"] as? [String: String] == ["$double": "nan"])
        #expect(bucket["custom"] as? [String: String] == ["$description": "opaque#7"])
        #expect(bucket["mixed"] as? [String: String] == ["$description": "[opaque#7]"])
        #expect(json["startedAt"] as? String == "1970-01-01T00:00:00.000Z")
        #expect(json["finishedAt"] as? String == "1970-01-01T00:00:02.500Z")
        #expect(json["durationSeconds"] as? Double == 2.5)
        #expect(json["flow"] is NSNull)
        #expect((json["operations"] as? [Any])?.isEmpty == true)
    }

    @Test(arguments: [
        (FlowFinishState.successfully, "successfully", nil),
        (.withError("boom"), "withError", "boom"),
        (.withInsufficientInputData("can't find k in data bucket"), "withInsufficientInputData", "can't find k in data bucket"),
        (.withMismatchInputDataType("k is not Int"), "withMismatchInputDataType", "k is not Int"),
        (.cancelled, "cancelled", nil),
    ] as [(FlowFinishState, String, String?)])
    func eachFinishStateHasItsNameAndErrorText(state: FlowFinishState, name: String, error: String?) {
        let record = FlowOperationRecord(
            operationName: "Op", tag: nil, groupIndex: nil, groupOutputKey: nil, worker: "w1",
            startedAt: Date(), finishedAt: Date(), state: state, logLines: [], location: nil)
        let entry = FlowRunReport.Operation(record: record)
        #expect(entry.state == name)
        #expect(entry.error == error)
    }
}
