import Dispatch
public import Flow
import Foundation

/// The seed's demo profile load: reads `accessToken` and after a simulated delay sets
/// `profileRefreshDate` to now. Parameters: `delay` (seconds, default 1).
// @unchecked: restated, as Swift 6 asks of FlowOperation's subclasses; no state of its own beyond `let`s.
public final class MockAsyncLoadProfileOp: FlowOperation, @unchecked Sendable {
    /// The simulated network delay.
    public let delay: Double

    /// Creates the op.
    public init(delay: Double = 1) {
        self.delay = delay
    }

    public override func mainLogic() {
        guard let _: String = getData(name: "accessToken") else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) {
            self.log(message: "simulation of success load profile callback")
            self.setData(name: "profileRefreshDate", value: Date())
            self.finishSuccessfully()
        }
        startWithAsynchronous()
    }
}

extension MockAsyncLoadProfileOp: FlowRemoteOperation {
    public var remoteParameters: [String: FlowValue] { ["delay": .double(delay)] }
}
