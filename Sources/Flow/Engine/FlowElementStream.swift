import Foundation

/// Pages of a list that a serial op puts out as it makes them (``FlowOperation/emit(_:to:)``),
/// taken by the group right after it while the op goes on (issue 49): the group starts on the
/// second page (or the op's end), and ends when the op has finished and the last element is done.
///
/// The engine makes one for a serial step followed by a group whose `input` is the key the op
/// emits to, and binds it (``current``) around the op's run in this process (on a cluster, an op
/// placed on the coordinator). An op run elsewhere, or one emitting to another key, finds none,
/// and its pages become its output list when it finishes.
///
/// At most ``window`` pages wait untaken: an op that lists faster than the group runs waits in
/// ``emit(_:)``, so memory stays flat.
final class FlowElementStream: FlowListingProgress {
    /// Pages that may wait before ``emit(_:)`` holds the op back.
    static let window = 8

    /// The bucket key the group reads.
    let key: String

    private struct State {
        var pages: [[Any]] = []
        /// Whether anything was emitted: the group reads the stream, not the bucket.
        var used = false
        /// Pages and elements emitted so far.
        var pagesEmitted = 0
        var elementsEmitted = 0
        /// The op finished: no page comes any more.
        var finished = false
        /// The group is over: emitting fails, so that the op stops.
        var closed = false
        /// Bumped at every change a waiter may wait for.
        var version = 0
        var readers: [(after: Int, waiter: CheckedContinuation<Void, Never>)] = []
        var writers: [CheckedContinuation<Bool, Never>] = []
        /// Called when a page arrives or the stream ends: the group's drive, to look again.
        var onChange: (@Sendable () -> Void)?
        /// The index of the first element emitted: 0, or in a resumed run whose op goes on from
        /// its listing's checkpoint (``resumedPosition()``), that page's first element.
        var base = 0
        /// Whether ``base`` is settled: by the op asking for its position, or by its first page.
        var baseSettled = false
        /// The position the op was told to go on from, once it asked.
        var resumedFrom: FlowValue?
        /// The positions the op gave with its pages, and the checkpoint kept from them.
        var positions = FlowListingPositions()

        /// Bumps the version and hands back the readers to wake, and the change callback.
        mutating func changed() -> (readers: [CheckedContinuation<Void, Never>], onChange: (@Sendable () -> Void)?) {
            version += 1
            defer { readers = [] }
            return (readers.map(\.waiter), onChange)
        }
    }

    private let state: FlowLocked<State>
    /// The run's journal and the serial step, where the listing's checkpoint is kept.
    private let journal: (any FlowJournal)?
    private let step: FlowStepID?
    /// The checkpoint an earlier life of the run kept (``FlowListingPositions``).
    private let resumable: (index: Int, position: FlowValue)?

    /// A stream for the group reading `key`; with a journal, its listing's checkpoints are kept as
    /// `step`'s (the serial op's, whose result is not journaled: a resume runs it again).
    init(key: String, journal: (any FlowJournal)? = nil, step: FlowStepID? = nil) {
        self.key = key
        self.journal = journal
        self.step = step
        resumable = step.flatMap { FlowListingPositions.decode(journal?.checkpoints(at: $0)[0]) }
        state = .make(State())
    }

    /// Where the op goes on listing in a resumed run (``FlowOperation/resumedPosition(for:)``):
    /// the position of the page an earlier life's checkpoint names, whose first element the
    /// op's next page then starts at; `nil` to list from the beginning. Settled by the first
    /// call or the first page, whichever comes first: asked after the first page, it answers
    /// as it did then (`nil` if it was not asked).
    func resumedPosition() -> FlowValue? {
        state.withLock { state in
            if !state.baseSettled, let resumable {
                state.base = resumable.index
                state.resumedFrom = resumable.position
            }
            state.baseSettled = true
            return state.resumedFrom
        }
    }

    /// The index of the first element emitted (``resumedPosition()``); settled once the op has
    /// emitted its first page, which the group waits for.
    var startIndex: Int { state.withLock { $0.base } }

    /// Every element before `mark` succeeded: keeps the listing's checkpoint if the page to go
    /// on from moved, and returns the mark at which to call again (``FlowSuccessMark``).
    func reached(_ mark: Int) -> Int {
        let (save, next) = state.withLock { state in
            state.positions.reached(mark, end: state.base + state.elementsEmitted)
        }
        if let save, let step { journal?.checkpointed(save, at: step, element: 0) }
        return next
    }

    /// The stream bound around the running op, if any.
    @TaskLocal static var current: FlowElementStream?

    /// Hands over a page, waiting while ``window`` pages wait untaken.
    ///
    /// - Throws: `CancellationError` when the group is over (it failed, or the run stopped): the
    ///   op should stop making pages.
    func emit(_ page: [Any], from position: FlowValue? = nil) async throws {
        guard !page.isEmpty else { return }
        while true {
            let room: Bool? = state.withLock { state in
                if state.closed { return false }
                return state.pages.count < Self.window ? true : nil
            }
            if room == false { throw CancellationError() }
            if room == true { break }
            let goOn = await withCheckedContinuation { (writer: CheckedContinuation<Bool, Never>) in
                let now: Bool? = state.withLock { state in
                    if state.closed { return false }
                    if state.pages.count < Self.window { return true }
                    state.writers.append(writer)
                    return nil
                }
                if let now { writer.resume(returning: now) }
            }
            if !goOn { throw CancellationError() }
        }
        let (readers, onChange) = state.withLock { state in
            state.baseSettled = true
            if let position { state.positions.emitted(start: state.base + state.elementsEmitted, position: position) }
            state.pages.append(page)
            state.used = true
            state.pagesEmitted += 1
            state.elementsEmitted += page.count
            return state.changed()
        }
        for reader in readers { reader.resume() }
        onChange?()
    }

    /// The op finished: the group ends once it has taken every page.
    func finish() {
        let (readers, onChange) = state.withLock { state in
            state.finished = true
            return state.changed()
        }
        for reader in readers { reader.resume() }
        onChange?()
    }

    /// The group is over: waiting and later emits fail.
    func close() {
        let (readers, writers) = state.withLock { state in
            state.closed = true
            state.pages = []
            let readers = state.changed().readers
            defer { state.writers = [] }
            return (readers, state.writers)
        }
        for reader in readers { reader.resume() }
        for writer in writers { writer.resume(returning: false) }
    }

    /// Whether the op emitted anything.
    var wasUsed: Bool { state.withLock { $0.used } }

    /// Sets what is called when a page arrives or the stream ends.
    func onChange(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.onChange = body }
    }

    /// What ``take()`` found.
    enum Take {
        case page([Any])
        /// None yet: wait for ``version`` to change (``waitForChange(after:)``).
        case notYet(version: Int)
        case ended
    }

    /// The next page, if one waits.
    func take() -> Take {
        let (take, writer): (Take, CheckedContinuation<Bool, Never>?) = state.withLock { state in
            if !state.pages.isEmpty {
                let page = state.pages.removeFirst()
                let writer = state.writers.isEmpty ? nil : state.writers.removeFirst()
                return (.page(page), writer)
            }
            if state.finished || state.closed { return (.ended, nil) }
            return (.notYet(version: state.version), nil)
        }
        writer?.resume(returning: true)
        return take
    }

    /// Returns once something changed after `version` (a page, the end).
    func waitForChange(after version: Int) async {
        await withCheckedContinuation { (reader: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                guard state.version == version else { return true }
                state.readers.append((version, reader))
                return false
            }
            if now { reader.resume() }
        }
    }

    /// Waits until the op emitted two pages or finished; `true` when it emitted. A list of one
    /// page is so known whole before its group starts (``finishedCount``): the group then knows
    /// its size, as a group over an array does.
    func secondPageOrEnd() async -> Bool {
        while true {
            let seen: (used: Bool, enough: Bool, version: Int) = state.withLock {
                ($0.used, $0.pagesEmitted >= 2 || $0.finished || $0.closed, $0.version)
            }
            if seen.enough { return seen.used }
            await waitForChange(after: seen.version)
        }
    }

    /// How many elements the op emitted, once it has finished; `nil` while it runs.
    var finishedCount: Int? { state.withLock { $0.finished ? $0.base + $0.elementsEmitted : nil } }
}
