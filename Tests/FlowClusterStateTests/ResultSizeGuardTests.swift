import Flow
import FlowWire
import Foundation
import Testing
@testable import FlowCluster

@Suite struct ResultSizeGuardTests {
    private func result(_ id: UInt64, output: Int) -> WireResult {
        WireResult(taskID: id, attempt: 1, finishState: .successfully, startedAt: Date(timeIntervalSince1970: 1),
                   finishedAt: Date(timeIntervalSince1970: 2), elementIndex: Int(id), output: .string(String(repeating: "x", count: output)))
    }

    @Test func aBatchWithinTheLimitGoesAsItIs() {
        let message = WireMessage.result([result(1, output: 10), result(2, output: 10)])
        #expect(ResultSizeGuard.frames(for: message, limit: 1_000) == [WireCodec.encode(message)])
    }

    @Test func aBatchOverTheLimitGoesOneByOneAndAResultOverItFailsPermanentlySayingItsSize() throws {
        let message = WireMessage.result([result(1, output: 10), result(2, output: 2_000), result(3, output: 10)])
        let sent = try ResultSizeGuard.frames(for: message, limit: 1_000).map(WireCodec.decode)
        #expect(sent.count == 3)
        guard sent.count == 3, case .result(let first) = sent[0], case .result(let second) = sent[1], case .result(let third) = sent[2] else { return }
        #expect(first == [result(1, output: 10)] && third == [result(3, output: 10)])
        let failed = try #require(second.first)
        #expect(failed.taskID == 2 && failed.elementIndex == 2 && failed.isPermanent && failed.output == nil)
        guard case .withError(let text) = failed.finishState else { Issue.record("not failed: \(failed.finishState)"); return }
        #expect(text.contains("more than the 1000 bytes one result may carry") && text.contains("put its path or URL in the bucket"), "\(text)")
        #expect(WireCodec.encode(.result(second)).reduce(0) { $0 + $1.count } <= 1_000)
    }
}
