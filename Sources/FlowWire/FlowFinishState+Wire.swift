package import Flow

extension FlowFinishState {
    /// The state's code byte on the wire (docs/PROTOCOL.md, "RESULT").
    package var wireCode: UInt8 {
        switch self {
        case .successfully: return 0x00
        case .withError: return 0x01
        case .withInsufficientInputData: return 0x02
        case .withMismatchInputDataType: return 0x03
        case .cancelled: return 0x04
        }
    }

    /// The state's text on the wire: the error text, empty for `successfully` and `cancelled`.
    package var wireText: String {
        switch self {
        case .successfully, .cancelled: return ""
        case .withError(let text), .withInsufficientInputData(let text), .withMismatchInputDataType(let text):
            return text
        }
    }
}

/// A finish state with what a failure says about trying again (docs/PROTOCOL.md §7.3).
package struct WireFinish: Sendable, Hashable {
    /// How the op finished.
    package var state: FlowFinishState
    /// For `withError`: whether trying again would fail the same way (code `0x05`).
    package var isPermanent: Bool
    /// For a transient `withError`: how long the op asked to wait before another try, in
    /// milliseconds; 0 for no preference.
    package var retryAfterMilliseconds: UInt64

    /// Creates a finish.
    package init(_ state: FlowFinishState, isPermanent: Bool = false, retryAfterMilliseconds: UInt64 = 0) {
        self.state = state
        let isError = { if case .withError = state { true } else { false } }()
        self.isPermanent = isError && isPermanent
        self.retryAfterMilliseconds = isError && !isPermanent ? retryAfterMilliseconds : 0
    }
}

extension WireWriter {
    /// Appends a finish state: code byte, text string (empty for codes that carry none), and for a
    /// transient error the wait it asked for.
    package mutating func writeFinish(_ finish: WireFinish) {
        if case .withError = finish.state, finish.isPermanent {
            writeUInt8(0x05)
            writeString(finish.state.wireText)
            return
        }
        writeUInt8(finish.state.wireCode)
        writeString(finish.state.wireText)
        if case .withError = finish.state { writeVarint(finish.retryAfterMilliseconds) }
    }
}

extension WireReader {
    /// Reads a finish state, rejecting an unknown code or text on a code that carries none.
    package mutating func readFinish(_ field: StaticString) throws(WireDecodingError) -> WireFinish {
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
            return WireFinish(code == 0x00 ? .successfully : .cancelled)
        case 0x01: return WireFinish(.withError(text), retryAfterMilliseconds: try readVarint("retry after"))
        case 0x02: return WireFinish(.withInsufficientInputData(text))
        case 0x03: return WireFinish(.withMismatchInputDataType(text))
        case 0x05: return WireFinish(.withError(text), isPermanent: true)
        default:
            throw WireDecodingError(.invalidField, offset: start, "\(field): unknown finish code 0x\(code.hexDigits)")
        }
    }
}
