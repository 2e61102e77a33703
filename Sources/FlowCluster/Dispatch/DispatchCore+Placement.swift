import Flow
import FlowWire

extension DispatchCore {
    /// The labels a task with a preference (`affinity: prefer`) is placed on now: its placement
    /// and its preference while a connected worker that takes tasks has them all, else its
    /// placement alone. A pool that places tasks itself weighs the preference there.
    func placement(_ required: [WireLabel], preferring preference: [WireLabel]) -> [WireLabel] {
        var both = Dictionary(required.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
        for label in preference where both[label.key] == nil { both[label.key] = label.value }
        let labels = both.map { WireLabel(key: $0.key, value: $0.value) }.sorted()
        let present = workers.values.contains { $0.takesTasks && !$0.isPool && $0.has(labels) }
        return present ? labels : required
    }

    /// What a task asks of a worker: its op, and its placement (empty for anywhere).
    struct OfferKey: Hashable {
        var op: String
        var placement: [WireLabel]
    }
}
