package import Flow
package import Foundation

/// Constants of protocol version `FLOW02` that both ends must agree on.
package enum WireLimits {
    /// The protocol's name and version, as frame 0 carries it: `FLOW02`. Every change to a
    /// message's layout changes it (docs/PROTOCOL.md §13).
    package static let protocolVersion = "FLOW02"

    /// Frame 0 of every message: protocol name and version.
    package static let protocolSignature: [UInt8] = Array(protocolVersion.utf8)

    /// The version a frame 0 names when it is `FLOW` and two ASCII digits other than ours
    /// (`FLOW01`), `nil` for ours or anything else (§9.3).
    package static func version(ofSignature frame: Data) -> String? {
        guard frame.count == protocolSignature.count, frame.starts(with: protocolSignature.prefix(4)),
              frame.dropFirst(4).allSatisfy({ (0x30...0x39).contains($0) }), !frame.elementsEqual(protocolSignature)
        else { return nil }
        return String(decoding: frame, as: UTF8.self)
    }

    /// How many arrays and maps may nest in one another inside one value.
    ///
    /// An array of scalars has depth 1, an array of such arrays depth 2 (`FlowValue.wireNestingDepth`).
    /// A decoder rejects deeper values; an encoder does not check, so a sender checks
    /// `FlowValue.wireNestingDepth` before it sends values it did not make itself.
    package static let maximumValueDepth = 64

    /// The largest frame a coordinator takes from a peer (READY, RESULT, HEARTBEAT, DISCONNECT):
    /// 256 MiB. A peer that sends a larger one is disconnected by libzmq (`ZMQ_MAXMSGSIZE`)
    /// before the coordinator buffers it; an op whose result is that big (a serial op that sets a
    /// list of millions of long values) fails as a lost worker does.
    package static let maximumInboundFrameSize = 256 << 20

    /// The most bytes (UTF-8) a worker name or a host name in READY may have: 255, a DNS name's
    /// limit. A decoder refuses a READY with a longer one (§7.1), so a peer cannot make the
    /// coordinator print or keep a name of megabytes.
    package static let maximumReadyNameBytes = 255

    /// The most bytes (UTF-8) one op name in READY may have: 255.
    package static let maximumOperationNameBytes = 255

    /// The most op names one READY may list: 1,024. A decoder refuses a longer list at its count,
    /// before it makes an array for it (§7.1).
    package static let maximumReadyOperations = 1_024

    /// The longest body a READY within the limits above can have: 263,700 bytes (each name at
    /// its longest, with a 2-byte length). A decoder refuses a longer READY body before it reads
    /// a field, and so before it copies the frame for reading.
    package static let maximumReadyBodySize: Int = {
        let name = 2 + maximumReadyNameBytes
        let operations = 2 + maximumReadyOperations * (2 + maximumOperationNameBytes)
        return name + 4 + 4 + operations + name + 4 + 4
    }()

    /// The most labels one LABELS may carry: 64 (§7.10). A decoder refuses more at the count.
    package static let maximumLabels = 64

    /// The most bytes one label's key may have: 63, as a Kubernetes label's name.
    package static let maximumLabelKeyBytes = FlowPlacement.maximumKeyBytes

    /// The most bytes (UTF-8) one label's value may have: 255, a host name's limit.
    package static let maximumLabelValueBytes = FlowPlacement.maximumValueBytes
}
