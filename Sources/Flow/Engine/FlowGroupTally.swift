import Foundation

/// What a running group has counted and collected so far. Only the engine's task touches it,
/// one element at a time; a class, so that the element-taking closure changes it in place
/// without the runtime's exclusivity check on every captured counter (such checks, on these and
/// on lock-guarded properties, were 7% of an in-process group's instructions, callgrind).
final class FlowGroupTally {
    /// How many elements the group has, as far as they are known (``FlowGroupListing``).
    let listing: FlowGroupListing
    /// Whether outputs are collected into an array (the group has an `output:` key).
    private let collecting: Bool
    /// Where outputs are written instead, as they come (`output: {file:}`).
    let outputFile: FlowGroupOutputFile?
    /// How far every element has succeeded, for a group fed by a listing that gives positions.
    let successMark: FlowSuccessMark?
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

    /// - Parameters:
    ///   - listing: the group's elements as far as they are known; a known count sizes the
    ///     outputs at once.
    ///   - collecting: whether outputs are collected into an array.
    ///   - outputFile: where outputs are written instead, as they come.
    ///   - successMark: how far every element has succeeded, for a group fed by a listing.
    init(listing: FlowGroupListing, collecting: Bool = true, outputFile: FlowGroupOutputFile? = nil, successMark: FlowSuccessMark? = nil) {
        self.listing = listing
        self.successMark = successMark
        self.collecting = collecting
        self.outputFile = outputFile
        let size = collecting ? listing.total ?? 0 : 0
        outputs = [Any](repeating: FlowMissingOutput.marker, count: size)
        collected = [Bool](repeating: false, count: size)
    }

    /// The group's element count, the elements known so far while they are not all known.
    var total: Int { listing.total ?? listing.listed }

    /// Keeps element `index`'s output: in the array, and in the output file.
    func collect(_ output: Any, at index: Int) {
        outputFile?.write(output, at: index)
        guard collecting else { return }
        if index >= outputs.count {
            // A group read from a file: the outputs grow with it.
            let grown = index + 1 - outputs.count
            outputs.append(contentsOf: repeatElement(FlowMissingOutput.marker as Any, count: grown))
            collected.append(contentsOf: repeatElement(false, count: grown))
        }
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
