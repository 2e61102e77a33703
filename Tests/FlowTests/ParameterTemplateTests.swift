import Foundation
import Testing
@testable import Flow

@Suite struct ParameterTemplateTests {
    @Test func aWholeReferenceKeepsTheBucketValuesType() throws {
        let resolved = try FlowParameterTemplate.resolve(["count": "${n}", "list": "${items}"], bucket: ["n": 3, "items": ["a"]])
        #expect(resolved["count"] == .integer(3))
        #expect(resolved["list"] == .array(["a"]))
    }

    @Test func embeddedReferencesArePrintedAndDollarDollarEscapes() throws {
        let resolved = try FlowParameterTemplate.resolve(
            ["url": "${base}/uploads/${n}", "raw": "cost $${price}", "nested": ["x": ["${base}"]]],
            bucket: ["base": "http://h", "n": 7])
        #expect(resolved["url"] == "http://h/uploads/7")
        #expect(resolved["raw"] == "cost ${price}")
        #expect(resolved["nested"] == ["x": ["http://h"]])
    }

    @Test func aMissingKeyNamesTheKeyAndTheParameter() {
        #expect(throws: FlowParameterTemplate.MissingKey.self) {
            _ = try FlowParameterTemplate.resolve(["path": "${folder}"], bucket: [:])
        }
        do {
            _ = try FlowParameterTemplate.resolve(["path": "in ${folder}"], bucket: [:])
        } catch {
            #expect(String(describing: error) == "can't find <folder> in data bucket (referenced by parameter 'path' as ${folder})")
        }
    }

    @Test func flowsResolveParametersAgainstTheBucketWhenTheStepRuns() async {
        var registry = probeRegistry(ConcurrencyProbe())
        registry.register("SetOp") { _ in FlowClosureOperation(name: "SetOp") { op in op.set("who", "world") } }
        let flow = Flow(definition: FlowDefinition(name: "t", steps: [
            .operation(FlowOperationStep(op: "SetOp")),
            .operation(FlowOperationStep(op: "PrintOp", parameters: ["message": "hello ${who}"])),
            .operation(FlowOperationStep(op: "PrintOp", parameters: ["message": "${missing}"])),
        ]), registry: registry)
        await flow.run()
        let lines = masked(flow)
        #expect(lines.contains("[PrintOp] hello world"))
        #expect(lines.contains("[PrintOp] DidFinish: withInsufficientInputData: can't find <missing> in data bucket (referenced by parameter 'message' as ${missing})"))
        #expect(!flow.isSuccess)
    }
}
