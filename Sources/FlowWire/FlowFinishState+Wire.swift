import Flow

extension FlowFinishState {
    /// The state's code byte on the wire (docs/PROTOCOL.md, "RESULT").
    public var wireCode: UInt8 {
        switch self {
        case .successfully: return 0x00
        case .withError: return 0x01
        case .withInsufficientInputData: return 0x02
        case .withMismatchInputDataType: return 0x03
        case .cancelled: return 0x04
        }
    }

    /// The state's text on the wire: the error text, empty for `successfully` and `cancelled`.
    public var wireText: String {
        switch self {
        case .successfully, .cancelled: return ""
        case .withError(let text), .withInsufficientInputData(let text), .withMismatchInputDataType(let text):
            return text
        }
    }
}

extension WireWriter {
    /// Appends a finish state: code byte, then text string (empty for codes that carry none).
    public mutating func writeFinishState(_ state: FlowFinishState) {
        writeUInt8(state.wireCode)
        writeString(state.wireText)
    }
}

extension WireReader {
    /// Reads a finish state, rejecting an unknown code or text on a code that carries none.
    public mutating func readFinishState(_ field: StaticString) throws(WireDecodingError) -> FlowFinishState {
        let start = offset
        let code = try readUInt8(field)
        let text = try readString(field)
        switch code {
        case 0x00, 0x04:
            guard text.isEmpty else {
                throw WireDecodingError(
                    .invalidField, offset: start,
                    "\(field): finish code 0x\(code.hexDigits) carries no text, got \(text.utf8.count) byte(s)"
                )
            }
            return code == 0x00 ? .successfully : .cancelled
        case 0x01: return .withError(text)
        case 0x02: return .withInsufficientInputData(text)
        case 0x03: return .withMismatchInputDataType(text)
        default:
            throw WireDecodingError(.invalidField, offset: start, "\(field): unknown finish code 0x\(code.hexDigits)")
        }
    }
}
