import Foundation

/// What a running group has counted and collected so far. Only the engine's task touches it,
/// one element at a time; a class, so that the element-taking closure changes it in place
/// without the runtime's exclusivity check on every captured counter (such checks, on these and
/// on lock-guarded properties, were 7% of an in-process group's instructions, callgrind).
final class FlowGroupTally {
    /// How many elements the group has.
    let total: Int
    // @exclusivity(unchecked): callgrind, flow-bench 2000 (30,000 in-process elements), all of the module's @exclusivity(unchecked) off: 456 M -> 522 M instructions; this class's checks (collect and the group's
    // acceptor) were 11.1 M (370 an element).
    @exclusivity(unchecked) var done = 0
    @exclusivity(unchecked) var retries = 0
    @exclusivity(unchecked) var retriedElements = 0
    @exclusivity(unchecked) var failures: [(result: FlowTaskResult, tag: String?)] = []
    /// Outputs in input order; a marker stands for each element that gave none.
    @exclusivity(unchecked) private var outputs: [Any]
    /// Which elements gave an output; only the markers' places are false.
    @exclusivity(unchecked) private var collected: [Bool]
    @exclusivity(unchecked) private var collectedCount = 0

    init(total: Int) {
        self.total = total
        outputs = [Any](repeating: FlowMissingOutput.marker, count: total)
        collected = [Bool](repeating: false, count: total)
    }

    /// Keeps element `index`'s output.
    func collect(_ output: Any, at index: Int) {
        outputs[index] = output
        if !collected[index] {
            collected[index] = true
            collectedCount += 1
        }
    }

    /// The outputs in input order, without the markers: handed over without a copy when every
    /// element gave one, and with no dynamic cast per element to find the markers.
    func takeOutputs() -> [Any] {
        defer { outputs = [] }
        guard collectedCount < outputs.count else { return outputs }
        var kept: [Any] = []
        kept.reserveCapacity(collectedCount)
        for index in outputs.indices where collected[index] { kept.append(outputs[index]) }
        return kept
    }
}

/// Stands for a group element that gave no output until the group's outputs are collected (it is
/// never checked for with `is`: ``FlowGroupTally`` knows the places it fills).
struct FlowMissingOutput: Sendable {
    static let marker = FlowMissingOutput()
}
