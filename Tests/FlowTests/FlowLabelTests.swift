import Foundation
import Testing
@testable import Flow

@Suite struct FlowLabelTests {
    @Test(arguments: [
        ("UploadFileOp", "3f2a", "worker-2", "[UploadFileOp 3f2a @ worker-2] WillStart"),
        ("UploadFileOp", "3f2a", nil, "[UploadFileOp 3f2a] WillStart"),
        ("SimplePrintOp", nil, nil, "[SimplePrintOp] WillStart"),
        ("SimplePrintOp", "", "", "[SimplePrintOp] WillStart"),
        ("ShellOp", nil, "w", "[ShellOp @ w] WillStart"),
    ] as [(String, String?, String?, String)])
    func anOpsLineIsItsLabelASpaceAndTheRestWhenRead(name: String, tag: String?, worker: String?, expected: String) {
        let label = FlowLabel(name: name, tag: tag, worker: worker)
        let entry = FlowLogEntry(time: Date(timeIntervalSince1970: 0), label: label, rest: "WillStart", element: nil)
        #expect(entry.text == expected)
        #expect(FlowLabel.make(name: name, tag: tag, worker: worker) + " WillStart" == expected)
    }

    @Test func aRecordedGroupElementsLinesCarryItsTagAndWorker() {
        let flow = Flow()
        var result = FlowTaskResult(operationName: "SleepOp", state: .successfully, error: nil,
                                    events: [FlowRecordedEvent(time: Date(), kind: .log("slept"))], bucket: [:],
                                    startedAt: Date(), finishedAt: Date(), worker: "worker-1")
        result.groupIndex = 0
        _ = flow.runState.record(result, tag: "beef", appliesBucketChanges: false, groupOutputKey: nil, location: nil,
                                 group: (number: 1, size: 1))
        let texts = flow.runState.entries.map(\.text)
        #expect(texts == ["[SleepOp beef @ worker-1] WillStart", "[SleepOp beef @ worker-1] slept",
                          "[SleepOp beef @ worker-1] DidFinish: successfully"])
    }
}
