import Foundation

/// A group's elements, handed out as tasks one at a time, in index order, from any thread: to the
/// engine filling a batch executor, or to the child tasks that run elements in this process.
///
/// Elements an earlier life of the run finished (replayed from the journal) are skipped, and the
/// journal is told ahead, in chunks, how far elements may have started, so a resumed run knows
/// which unfinished ones may have run.
final class FlowGroupFeed: Sendable {
    private let plan: FlowGroupPlan
    private let tags: FlowGroupTags
    private let replayed: FlowIndexBits
    private let journal: (any FlowJournal)?
    private let id: FlowStepID
    private let startedBefore: Int
    /// The checkpoints of the group's ops.
    private let checkpoints: FlowStepCheckpoints
    private let whenRefused: @Sendable () -> Void
    /// The pages the elements come from, when a serial op emits them.
    private let stream: FlowElementStream?
    /// Called when the feed learns, on a child task, that it has handed out its last element
    /// (``expected`` became known): the engine waiting for results looks again.
    private let waker = FlowLocked<(@Sendable () -> Void)?>.make(nil)
    // A pthread mutex (FlowLocked, adaptive: the child tasks and the engine take it in turn all
    // the time): ThreadSanitizer sees through it (not through `Mutex`, whose futex it does not
    // know), and the TSan pass covers this file. Its value is reached through a pointer, with no
    // exclusivity check (those were 155 instructions an element as a class's `var`, callgrind).
    private let state: FlowLocked<State>

    private struct State {
        /// The elements: in the state, where its `[Any]` is read (and a file's pages are read)
        /// under the lock.
        var source: FlowGroupSource
        /// The position of the next element to hand out (its index, but for an affinity group's
        /// array, ``FlowGroupSource/index(at:)``): always one not replayed (``advance()``). The
        /// journal's bound on started elements counts positions.
        var next = 0
        /// Elements handed out so far.
        var handedOut = 0
        /// No element is left to hand out: ``handedOut`` is final. Known as the last element is
        /// handed out (the file is read ahead to learn it), so before that element's result
        /// can arrive.
        var drained = false
        var mayStartThrough = -1
        var closed = false
        /// The journal could not keep how far elements may start: none starts any more.
        var refused = false
        /// Failed elements handed to the engine and not judged yet: no element starts meanwhile.
        var judging = 0
        /// Child tasks waiting for the judging to end.
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    /// - Parameters:
    ///   - plan: the group's plan, its op's parameters resolved.
    ///   - source: the elements.
    ///   - replayed: the elements an earlier life of the run finished.
    ///   - journal: the run's journal, told how far elements may have started.
    ///   - id: the group's step.
    ///   - whenRefused: called once when the journal refuses (``wasRefused``), outside the lock:
    ///     stops the run, so that the engine stops waiting for elements that will not come.
    init(plan: FlowGroupPlan, source: FlowGroupSource, tags: FlowGroupTags, replayed: FlowIndexBits, journal: (any FlowJournal)?,
         id: FlowStepID, whenRefused: @escaping @Sendable () -> Void = {}) {
        self.whenRefused = whenRefused
        self.plan = plan
        self.tags = tags
        self.replayed = replayed
        stream = source.elementStream
        var first = State(source: source)
        first.next = source.startIndex
        Self.advance(&first, past: replayed)
        state = .make(first)
        self.journal = journal
        self.id = id
        startedBefore = journal?.startedThrough(at: id) ?? -1
        checkpoints = FlowStepCheckpoints(journal: journal, step: id)
    }

    /// Whether the journal refused to keep how far elements may start
    /// (``FlowJournal/mayStart(at:through:)``): the feed then hands out nothing more, and the
    /// group ends cancelled, not complete.
    var wasRefused: Bool { withState { $0.refused } }

    deinit {
        state.withLock { $0.source.close() }
    }

    /// How many elements the feed hands out in all, once it has handed out its last one; `nil`
    /// before (a file not read to its end yet).
    var expected: Int? { withState { $0.drained ? $0.handedOut : nil } }

    /// Whether the feed hands out nothing more: its last element is out, or it is closed.
    var isFinished: Bool { withState { $0.drained || $0.closed } }

    /// Sets what is called when elements arrive from the stream, or when a child task finds the
    /// last one handed out.
    func setWaker(_ body: @escaping @Sendable () -> Void) {
        waker.withLock { $0 = body }
        stream?.onChange(body)
    }

    private func wake() {
        waker.withLock { $0 }?()
    }

    /// Why the input file could not be read to its end, if it could not.
    var inputFailure: FlowInputFileError? { withState { $0.source.failure } }

    /// The next element's task, or `nil` when none is left or the feed is closed (the engine's
    /// side, which judges failures itself).
    func next() -> FlowTask? {
        switch take(waitingForJudgement: false) {
        case .element(let index, let element, let mayHaveRun): return makeTask(index, element: element, mayHaveRun: mayHaveRun)
        case .refused:
            close()
            whenRefused()
            return nil
        case .wait, .none, .arriving: return nil
        case .drainedNow:
            wake()
            return nil
        }
    }

    /// The next element's task for a child task that runs elements (or the engine's
    /// one-at-a-time drive): waits while a failure is being judged (``judging(delivering:)``), so
    /// that a failure that ends the group ends it with no element started after it, and for the
    /// stream's next page when none has arrived; `nil` when none is left or the feed is closed.
    func nextWhenJudged() async -> FlowTask? {
        while true {
            switch take(waitingForJudgement: true) {
            case .element(let index, let element, let mayHaveRun): return makeTask(index, element: element, mayHaveRun: mayHaveRun)
            case .none: return nil
            case .drainedNow:
                wake()
                return nil
            case .arriving(let version): await stream?.waitForChange(after: version)
            case .refused:
                close()
                whenRefused()
                return nil
            case .wait:
                await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                    let goOn = withState { state in
                        guard state.judging > 0, !state.closed else { return true }
                        state.waiting.append(waiter)
                        return false
                    }
                    if goOn { waiter.resume() }
                }
            }
        }
    }

    private func withState<T>(_ body: (inout State) -> T) -> T {
        state.withLock(body)
    }

    /// Where the next element stands, decided under the lock; its task is made outside it.
    private enum Slot {
        /// `mayHaveRun`: an earlier life of the run may have started it (at or before the
        /// journal's bound then).
        case element(index: Int, element: Any, mayHaveRun: Bool)
        case wait
        case none
        /// The feed has just found that its last element is out (a stream ended).
        case drainedNow
        /// None has arrived from the stream yet: wait for it to change after `version`.
        case arriving(version: Int)
        /// The journal refused: the feed is closed now.
        case refused
    }

    private func take(waitingForJudgement: Bool) -> Slot {
        withState { state in
            guard !state.closed else { return .none }
            if waitingForJudgement, state.judging > 0 { return .wait }
            guard !state.drained else { return .none }
            let element: Any
            switch state.source.lookup(state.next) {
            case .element(let found): element = found
            case .end:
                state.drained = true
                return .drainedNow
            case .notYet(let version): return .arriving(version: version)
            }
            let position = state.next
            if let journal, position > state.mayStartThrough {
                // Under the lock: no element starts before the journal has it.
                var through = position + max(256, 4 * plan.maxConcurrent)
                if state.source.isComplete { through = min(state.source.listed - 1, through) }
                guard journal.mayStart(at: id, through: through) else {
                    // Nothing more starts; the child tasks waiting for a judgement find nothing
                    // either (``close()`` lets them go).
                    state.closed = true
                    state.refused = true
                    return .refused
                }
                state.mayStartThrough = through
            }
            state.next += 1
            state.handedOut += 1
            Self.advance(&state, past: replayed)
            return .element(index: state.source.index(at: position), element: element, mayHaveRun: position <= startedBefore)
        }
    }

    /// Moves ``State/next`` past replayed elements, and marks the feed drained when no element is
    /// left: reads the file ahead as far as that needs.
    private static func advance(_ state: inout State, past replayed: FlowIndexBits) {
        while replayed.contains(state.source.index(at: state.next)) {
            guard case .element = state.source.lookup(state.next) else { break }
            state.next += 1
        }
        if case .end = state.source.lookup(state.next) { state.drained = true }
    }

    private func makeTask(_ index: Int, element: Any, mayHaveRun: Bool) -> FlowTask {
        var task = Self.task(plan, tags: tags, index: index, element: element)
        task.mayHaveRunBefore = mayHaveRun
        task.checkpoints = checkpoints
        return task
    }

    /// Hands a failed element's result over (`deliver`): until the engine has judged it
    /// (``judged()``) or stopped the group (``close()``), no further element starts.
    func judging(delivering deliver: () -> Void) {
        withState { $0.judging += 1 }
        deliver()
    }

    /// The engine judged a failed element and the group goes on.
    func judged() {
        let waiting = withState { state in
            state.judging -= 1
            guard state.judging == 0 else { return [CheckedContinuation<Void, Never>]() }
            defer { state.waiting = [] }
            return state.waiting
        }
        for waiter in waiting { waiter.resume() }
    }

    /// Hands out nothing more, and lets every waiting child task go (to find nothing more).
    func close() {
        stream?.close()
        let waiting = withState { state in
            state.closed = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for waiter in waiting { waiter.resume() }
    }

    /// The task of element `index`: a fresh op instance for an op given by its type.
    static func task(_ plan: FlowGroupPlan, tags: FlowGroupTags, index: Int, element: Any) -> FlowTask {
        let operation: FlowTask.Operation
        let name: String
        switch plan.source {
        case .creator(let creator):
            let instance = creator.create()
            (operation, name) = (.instance(instance), instance.operationName)
        case .named(let opName, let parameters):
            (operation, name) = (.named(opName, parameters: parameters), opName)
        }
        var task = FlowTask(operation: operation, bucket: [:], groupTag: tags.tag(for: index), groupIndex: index,
                            groupElement: element, operationName: name, location: plan.location)
        task.timeLimit = plan.policy.timeout
        task.retry = plan.policy.retry
        task.placement = plan.policy.placement
        task.affinity = plan.policy.affinity
        task.placementWait = plan.policy.affinityTimeout
        if let affinity = plan.policy.affinity, let labels = FlowAffinity.labels(of: element) {
            switch affinity {
            case .source:
                // Every label the group asks, and the element's own: the element's host wins.
                task.placement = FlowPlacement((plan.policy.placement?.labels ?? [:]).merging(labels) { $1 }) ?? task.placement
            case .prefer:
                task.preferredPlacement = FlowPlacement(labels)
            }
        }
        return task
    }
}
