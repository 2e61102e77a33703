import FlowWire
import Foundation
import Logging

extension WorkerStateMachine {
    /// Whether this worker's READY set feature `bit`.
    func announced(_ bit: UInt32) -> Bool { configuration.ready.features & bit != 0 }

    /// RATE (§15.2): without feature bit 4 it is unexpected (§9.2) and dropped; with bit 4 but
    /// not bit 5 its request-rate entries are ignored and its other entries applied. Each
    /// violation is logged once; none stops a task or ends the registration.
    mutating func received(_ rates: [WireRate]) -> [Action] {
        guard announced(WireReady.Feature.progress) else { return unannounced(WireReady.Feature.progress, .rate) }
        guard !announced(WireReady.Feature.requests), rates.contains(where: { $0.requestsBudget != nil }) else { return [.setRates(rates)] }
        return unannounced(WireReady.Feature.requests, .rate) + [.setRates(rates.filter { $0.requestsBudget == nil })]
    }

    /// A message that uses a feature this worker did not announce: dropped (or, for request-rate
    /// entries, ignored), logged at warning once per feature.
    mutating func unannounced(_ bit: UInt32, _ command: WireCommand) -> [Action] {
        guard featureViolationsLogged.insert(bit).inserted else { return [] }
        let what = bit == WireReady.Feature.requests ? "request-rate entries in a RATE" : "\(command)"
        return [.log(.warning, "\(configuration.coordinator) sent \(what), a feature (bit \(bit.trailingZeroBitCount)) this worker did "
            + "not announce: ignored (§9.2); said once", [:])]
    }
}
