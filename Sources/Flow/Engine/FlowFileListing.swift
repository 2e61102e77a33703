/// Where each page of a group's input file (`input: {file:}`) began, for a resumed run to go on
/// reading from the page its journal names instead of reading the file again from its start
/// (issue 49), as a listing op goes on from its position (``FlowElementStream``).
///
/// The checkpoint is the group step's own, at element -1 (its elements' are at their indices).
final class FlowFileListing: FlowListingProgress {
    /// The element the group step's input checkpoint is kept under.
    static let checkpointElement = -1

    private let journal: (any FlowJournal)?
    private let step: FlowStepID
    /// The page an earlier life's checkpoint names: its first element's index and its place.
    let resumable: (index: Int, place: FlowInputFile.Place)?
    private struct State {
        var positions = FlowListingPositions()
        var base = 0
        var end = 0
    }
    private let state: FlowLocked<State>

    init(journal: (any FlowJournal)?, step: FlowStepID) {
        self.journal = journal
        self.step = step
        let saved = FlowListingPositions.decode(journal?.checkpoints(at: step)[Self.checkpointElement])
        resumable = saved.flatMap { saved in FlowInputFile.Place(saved.position).map { (saved.index, $0) } }
        state = .make(State())
    }

    /// The file was read on from the checkpoint's page (``FlowInputFile/skip(to:)``): its
    /// elements are numbered from that page's first one.
    func wentOn(from index: Int) {
        state.withLock { state in
            state.base = index
            state.end = index
        }
    }

    var startIndex: Int { state.withLock { $0.base } }

    /// A page of `count` elements starting at element `start` was read from `place`.
    func read(start: Int, count: Int, from place: FlowInputFile.Place) {
        state.withLock { state in
            state.positions.emitted(start: start, position: place.value)
            state.end = start + count
        }
    }

    func reached(_ mark: Int) -> Int {
        let (save, next) = state.withLock { state in state.positions.reached(mark, end: state.end) }
        if let save { journal?.checkpointed(save, at: step, element: Self.checkpointElement) }
        return next
    }
}
