import Foundation
import Testing
@testable import Flow

/// Reads `key` as `T` with `getData`, records what it got, finishes successfully if it got a value.
final class ReadOp<T>: FlowOperation, @unchecked Sendable {
    let key: String
    let isOptional: Bool
    private(set) var got: T?
    init(_ key: String, as: T.Type, isOptional: Bool = false) {
        self.key = key
        self.isOptional = isOptional
    }
    override func mainLogic() {
        got = getData(name: key, isOptional: isOptional)
        if got != nil || isOptional { finishSuccessfully() }
    }
}

final class WriteOp: FlowOperation, @unchecked Sendable {
    let key: String
    let value: Any
    init(_ key: String, _ value: Any) {
        self.key = key
        self.value = value
    }
    override func mainLogic() {
        setData(name: key, value: value)
        finishSuccessfully()
    }
}

@Suite struct DataBucketTests {
    @Test func wrongTypeStopsTheFlowWithTheSeedMessage() async {
        let flow = Flow().setDataBucket(dataBucket: ["count": "three"])
            .add(operation: ReadOp("count", as: Int.self))
            .add(operation: WriteOp("never", 1))
        await flow.run()
        #expect(!flow.isSuccess)
        #expect(flow.error == nil)
        #expect(flow.dataBucket["never"] == nil)
        #expect(masked(flow).contains(
            "[ReadOp<Int>] DidFinish: withMismatchInputDataType: <count> in data bucket is <three> with type <String>, but NOT type <Int>."))
    }

    @Test func optionalReadOfAMissingKeyReturnsNilWithoutFailing() async {
        let read = ReadOp("absent", as: String.self, isOptional: true)
        let flow = Flow().add(operation: read)
        await flow.run()
        #expect(flow.isSuccess)
        #expect(read.got == nil)
    }

    @Test func writesAreLoggedAsAddThenReplace() async {
        let flow = Flow().setDataBucket(dataBucket: ["k": "old"])
            .add(operation: WriteOp("k", "new"))
            .add(operation: WriteOp("fresh", 42))
        await flow.run()
        let lines = masked(flow)
        #expect(lines.contains("[DataBucket] replace for k: old -> new"))
        #expect(lines.contains("[DataBucket] add for fresh: 42"))
        #expect(flow.dataBucket["k"] as? String == "new")
    }

    @Test func aTextValueReachesTheSummaryWithItsLinesButNoEscapeSequence() async {
        let output = "line 1\u{1B}[2J\u{1B}]0;title\u{07}\nline 2\tcell\r"
        let flow = Flow().add(operation: WriteOp("output", output))
        await flow.run()
        #expect(flow.dataBucket["output"] as? String == output, "the bucket keeps the value as it is")
        let summary = flow.generateSummary()
        #expect(!summary.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x0D }, "\(summary.debugDescription)")
        #expect(summary.contains("[DataBucket] add for output: line 1\\u{1B}[2J\\u{1B}]0;title\\u{7}\nline 2\tcell\\r"))
    }

    @Test func aLaterOpReadsWhatAnEarlierOneWrote() async {
        let read = ReadOp("token", as: String.self)
        let flow = Flow().add(operation: WriteOp("token", "abc")).add(operation: read)
        await flow.run()
        #expect(read.got == "abc")
    }

    @Test func anyUserTypeWorksInProcess() async {
        struct LoginData { let user: String }
        let read = ReadOp("login", as: LoginData.self)
        let flow = Flow().setDataBucket(dataBucket: ["login": LoginData(user: "roy")]).add(operation: read)
        await flow.run()
        #expect(read.got?.user == "roy")
    }
}
