import Dispatch
public import Flow
import Foundation

/// The seed's demo login: reads `email` and `password`, and after a simulated delay sets
/// `accessToken` for `test@gmail.com` / `123456`, or fails with `No such account` (404).
/// Parameters: `delay` (seconds, default 1).
// @unchecked: restated, as Swift 6 asks of FlowOperation's subclasses; no state of its own beyond `let`s.
public final class MockAsyncLoginOp: FlowOperation, @unchecked Sendable {
    /// The simulated network delay.
    public let delay: Double

    /// Creates the op.
    public init(delay: Double = 1) {
        self.delay = delay
    }

    public override func mainLogic() {
        guard let email: String = getData(name: "email") else { return }
        guard let password: String = getData(name: "password") else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) {
            self.log(message: "simulation of login callback")
            if email == "test@gmail.com" && password == "123456" {
                self.setData(name: "accessToken", value: "sdaftadagasg")
                self.finishSuccessfully()
            } else {
                self.finishWithError(error: NSError(domain: "No such account", code: 404, userInfo: nil))
            }
        }
        startWithAsynchronous()
    }
}

extension MockAsyncLoginOp: FlowRemoteOperation {
    public var remoteParameters: [String: FlowValue] { ["delay": .double(delay)] }
}
