import Flow
import FlowWire
import Foundation

extension WorkerIOLoop {
    /// The reason a DISCONNECT of another protocol version gives, escaped for a log line; `nil`
    /// for any other message. DISCONNECT's body, one reason string, is the same in every version
    /// (docs/PROTOCOL.md §13), so a coordinator of another version can say why it refuses.
    static func disconnectReason(in frames: [Data]) -> String? {
        guard frames.count == 3, frames[1] == Data([WireCommand.disconnect.rawValue]) else { return nil }
        var reader = WireReader(frames[2])
        guard let reason = try? reader.readString("reason", maximumBytes: 1_024), (try? reader.expectEnd()) != nil else { return nil }
        return reason.escapingControlCharacters
    }
}
