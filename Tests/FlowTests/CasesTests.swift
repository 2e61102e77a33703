import Foundation
import Testing
@testable import Flow

final class NoteOp: FlowOperation, @unchecked Sendable {
    let message: String
    init(_ message: String) { self.message = message }
    override func mainLogic() {
        log(message: message)
        finishSuccessfully()
    }
}

func notes(_ flow: Flow) -> [String] {
    masked(flow).filter { $0.hasPrefix("[NoteOp] ") && !$0.contains("WillStart") && !$0.contains("DidFinish") }
        .map { String($0.dropFirst("[NoteOp] ".count)) }
}

@Suite struct CasesTests {
    func demo(target: String) -> Flow {
        Flow().setDataBucket(dataBucket: ["target": target])
            .add(operation: NoteOp("Step1"))
            .add(operation: NoteOp("Step2A1"), flowCase: FlowCase(key: "target", value: "A"))
            .add(operation: NoteOp("Step2A2"))
            .add(operation: NoteOp("Step2B1"), flowCase: FlowCase(key: "target", value: "B"))
            .add(operation: NoteOp("Step2B2"))
            .combine()
            .add(operation: NoteOp("Step3"))
    }

    @Test func theSecondBranchRunsWhenItMatches() async {
        let flow = demo(target: "B")
        await flow.run()
        #expect(notes(flow) == ["Step1", "Step2B1", "Step2B2", "Step3"])
    }

    @Test func noMatchEndsEarlyAndSuccessfully() async {
        let flow = demo(target: "C")
        await flow.run()
        #expect(flow.isSuccess)
        #expect(notes(flow) == ["Step1"])
        #expect(masked(flow).contains("[Cases] no case is matached. finished in early."))
    }

    @Test func aLoneBranchRunsOnlyWhenItMatches() async {
        let flow = Flow().setDataBucket(dataBucket: ["target": "B"])
            .add(operation: NoteOp("A only"), flowCase: FlowCase(key: "target", value: "A"))
            .combine()
            .add(operation: NoteOp("after"))
        await flow.run()
        #expect(notes(flow).isEmpty)
    }

    @Test func aNonStringValueMatchesNoBranch() async {
        let flow = Flow().setDataBucket(dataBucket: ["target": 1])
            .add(operation: NoteOp("one"), flowCase: FlowCase(key: "target", value: "1"))
        await flow.run()
        #expect(notes(flow).isEmpty)
        #expect(flow.isSuccess)
    }

    @Test func definitionsSupportDefaultAndNestedCases() async {
        let inner = FlowStep.cases(FlowCasesStep(branches: [
            FlowCaseBranch(key: "size", value: "big", steps: [.operation(FlowOperationStep(op: "PrintOp", parameters: ["message": .string("A-big")]))]),
        ], defaultSteps: [.operation(FlowOperationStep(op: "PrintOp", parameters: ["message": .string("A-other")]))]))
        let definition = FlowDefinition(name: "nested", steps: [
            .cases(FlowCasesStep(branches: [
                FlowCaseBranch(key: "target", value: "A", steps: [inner]),
            ], defaultSteps: [.operation(FlowOperationStep(op: "PrintOp", parameters: ["message": .string("default")]))])),
            .operation(FlowOperationStep(op: "PrintOp", parameters: ["message": .string("end")])),
        ])
        let registry = probeRegistry(ConcurrencyProbe())
        func printed(_ bucket: [String: FlowValue]) async -> [String] {
            var copy = definition
            copy.bucket = bucket
            let flow = Flow(definition: copy, registry: registry)
            await flow.run()
            return masked(flow).filter { $0.hasPrefix("[PrintOp] ") && !$0.contains("WillStart") && !$0.contains("DidFinish") }
        }
        #expect(await printed(["target": "A", "size": "big"]) == ["[PrintOp] A-big", "[PrintOp] end"])
        #expect(await printed(["target": "A", "size": "small"]) == ["[PrintOp] A-other", "[PrintOp] end"])
        #expect(await printed(["target": "Z"]) == ["[PrintOp] default", "[PrintOp] end"])
    }
}
