import Dispatch
public import Flow

/// The seed's demo group op: after a simulated delay turns image `x` into `url_of_x`.
/// Primary input `targetImageForUpload`, primary output `uploadedImageUrl`.
/// Parameters: `delay` (seconds, default 1).
// @unchecked: restated, as Swift 6 asks of FlowOperation's subclasses; no state of its own beyond `let`s.
public final class UploadSingleImageOp: FlowOperation, FlowOperationCreator, @unchecked Sendable {
    /// The simulated upload time.
    public let delay: Double

    /// Creates the op.
    public init(delay: Double = 1) {
        self.delay = delay
    }

    public static func create() -> FlowOperation {
        UploadSingleImageOp()
    }

    public override var primaryInputParamKey: String { "targetImageForUpload" }
    public override var primaryOutputParamKey: String { "uploadedImageUrl" }

    public override func mainLogic() {
        guard let image: String = getData(name: primaryInputParamKey) else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) {
            self.log(message: "simulation of upload single image callback")
            self.setData(name: self.primaryOutputParamKey, value: "url_of_" + image)
            self.finishSuccessfully()
        }
        startWithAsynchronous()
    }
}

extension UploadSingleImageOp: FlowRemoteOperation {
    public var remoteParameters: [String: FlowValue] { ["delay": .double(delay)] }
}
