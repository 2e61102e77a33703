import Foundation
import Testing
import Flow

struct ParseOp: FlowChainableOperation {
    func performWithInput(_ input: String, completionHandler: @escaping @Sendable (Int?) -> Void) {
        completionHandler(Int(input))
    }
}

struct DoubleOp: FlowChainableOperation {
    func performWithInput(_ input: Int?, completionHandler: @escaping @Sendable (Int) -> Void) {
        DispatchQueue.global().async { completionHandler((input ?? 0) * 2) }
    }
}

struct DescribeOp: FlowChainableOperation {
    func performWithInput(_ input: Int, completionHandler: @escaping @Sendable (String) -> Void) {
        completionHandler("value=\(input)")
    }
}

@Suite struct ChainTests {
    @Test func eachOpReceivesThePreviousOutput() async {
        let chain = FlowOperationChain(rootOperation: ParseOp()).append(DoubleOp()).append(DescribeOp())
        #expect(await chain.perform(with: "21") == "value=42")
        #expect(await chain.perform(with: "x") == "value=0")
    }
}
