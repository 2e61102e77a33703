/// Constants of protocol version `FLOW01` that both ends must agree on.
public enum WireLimits {
    /// Frame 0 of every message: protocol name and version.
    public static let protocolSignature: [UInt8] = Array("FLOW01".utf8)

    /// How many arrays and maps may nest in one another inside one value.
    ///
    /// An array of scalars has depth 1, an array of such arrays depth 2 (`FlowValue.wireNestingDepth`).
    /// A decoder rejects deeper values; an encoder does not check, so a sender checks
    /// `FlowValue.wireNestingDepth` before it sends values it did not make itself.
    public static let maximumValueDepth = 64
}
