import FlowWire
import Logging

/// Messages from the coordinator that the worker cannot take: malformed ones (§9.1), and ones of
/// another protocol version (§9.3).
extension WorkerStateMachine {
    /// A message that could not be decoded: dropped; the coordinator is alive (§8.5) when it was a
    /// FLOW02 message (`signOfLife`), not when its frame 0 was not FLOW at all.
    mutating func receivedMalformed(_ reason: String, signOfLife: Bool = true, now: Instant) -> [Action] {
        if signOfLife { lastReceived = now }
        if let last = lastMalformedLog, now - last < .seconds(1) { return [] }
        lastMalformedLog = now
        return [.log(.warning, "dropped a malformed message from the coordinator: \(reason)", [:])]
    }

    /// A message of another protocol version (§9.3): logged, naming both versions, at most once a
    /// minute, and not taken as hearing from the coordinator, which cannot serve this worker.
    ///
    /// - Parameter said: the reason of a DISCONNECT in that version, when it was one.
    mutating func receivedOtherVersion(_ version: String, said: String?, now: Instant) -> [Action] {
        if let last = lastOtherVersionLog, now - last < .seconds(60) { return [] }
        lastOtherVersionLog = now
        let reason = said.map { " (it said: \($0))" } ?? ""
        return [.log(.error, "\(configuration.coordinator) speaks protocol version \(version), this worker speaks "
                     + "\(WireLimits.protocolVersion)\(reason): run a flow-worker of the same release as the flow-coordinator", [:])]
    }
}
