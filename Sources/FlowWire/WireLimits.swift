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

    /// The largest frame a coordinator takes from a peer (READY, RESULT, HEARTBEAT, DISCONNECT):
    /// 256 MiB. A peer that sends a larger one is disconnected by libzmq (`ZMQ_MAXMSGSIZE`)
    /// before the coordinator buffers it; an op whose result is that big (a serial op that sets a
    /// list of millions of long values) fails as a lost worker does.
    public static let maximumInboundFrameSize = 256 << 20
}
