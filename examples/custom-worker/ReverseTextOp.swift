import Flow

/// An op of your own: reverses its input text. As a group op its input key is `text` and its
/// output key `reversed`; as a serial op it reads `text` and writes `reversed`.
final class ReverseTextOp: FlowOperation, @unchecked Sendable {
    let uppercase: Bool

    init(uppercase: Bool) {
        self.uppercase = uppercase
    }

    override var primaryInputParamKey: String { "text" }
    override var primaryOutputParamKey: String { "reversed" }

    override func mainLogic() {
        guard let text: String = getData(name: primaryInputParamKey) else { return }
        let reversed = String(text.reversed())
        log(message: "reversing \(text)")
        setData(name: primaryOutputParamKey, value: uppercase ? reversed.uppercased() : reversed)
        finishSuccessfully()
    }
}
