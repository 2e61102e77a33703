import Foundation

/// Where a step stands in its flow's tree: the same for the same definition in every run, so a
/// resumed run finds its earlier results by it.
///
/// Top-level steps are `0`, `1`, …; a step in a case branch adds the step's index in the branch to
/// the cases step's and the branch's (`2/1/0`: the first step of the second branch of step 2; a
/// `default:` branch is `d`).
public struct FlowStepID: Hashable, Sendable, CustomStringConvertible {
    /// The path, as text.
    public let path: String

    /// Creates an id from its text.
    public init(path: String) {
        self.path = path
    }

    /// The id of step `index` inside this one's branch `branch` (`nil`: at the top level).
    func child(_ index: Int, branch: String? = nil) -> FlowStepID {
        FlowStepID(path: [path.isEmpty ? nil : path, branch, String(index)].compactMap { $0 }.joined(separator: "/"))
    }

    /// The root, above the top-level steps.
    static let root = FlowStepID(path: "")

    public var description: String { path }
}

/// A run's record: the engine tells it every result it accepts, as it accepts it, and asks it,
/// before running a step, what an earlier life of the same run already did there.
///
/// A new run's journal knows nothing, so every step runs. A resumed run's journal gives back the
/// results that were recorded: the engine records them into the summary and the bucket exactly as
/// it did the first time, and runs only the rest. Implementations must be quick: the engine calls
/// them on its own task, once per result.
public protocol FlowJournal: AnyObject, Sendable {
    /// What an earlier life of the run accepted at `step`: for a serial op at most one result, for
    /// a group its finished elements (each with its `groupIndex`). Empty for a new run.
    func recordedResults(at step: FlowStepID) -> [FlowJournalRecord]

    /// What an earlier life of the run accepted at a group's `step`, a page at a time, in the
    /// order it was recorded: the page that follows `position` (`0` for the first) and the
    /// position to ask for the next one, `nil` after the last. A resumed group of ten million
    /// elements is taken back page by page, never held whole. The default gives
    /// ``recordedResults(at:)`` as one page.
    func recordedPage(at step: FlowStepID, after position: Int) -> (records: [FlowJournalRecord], next: Int?)

    /// A group at `step` starts with `total` elements.
    func groupStarted(at step: FlowStepID, total: Int)

    /// The engine accepted `record` for `step` (a serial op, or one element of a group). Cancelled
    /// results are never accepted: what was cancelled did not finish.
    func accepted(_ record: FlowJournalRecord, at step: FlowStepID)

    /// Elements `0...index` of the group at `step` (index 0: the serial op) may start from now
    /// on. The indices are the order the group hands its elements out in: their own, but for a
    /// group with `affinity:` over a list, whose hosts take turns (the same turns on a resume).
    /// The engine calls it ahead of starting them, in chunks, and waits: the journal must
    /// keep it durably before it returns, so a resumed run knows which unfinished elements may
    /// have run (``startedThrough(at:)``). The default does nothing.
    ///
    /// - Returns: `false` when the journal could not keep it (a full disk): the elements must not
    ///   start, as a resume would not know they may have run; the engine then stops the run as
    ///   cancelled, and a resume goes on from what the journal holds.
    @discardableResult
    func mayStart(at step: FlowStepID, through index: Int) -> Bool

    /// The highest index an earlier life of the run said may start at `step` (``mayStart(at:through:)``),
    /// `nil` when it said nothing there. Elements up to it that have no recorded result run again
    /// with ``FlowTask/mayHaveRunBefore`` set. The default is `nil`.
    func startedThrough(at step: FlowStepID) -> Int?

    /// The op of element `index` of the step at `step` (0: the serial op) saved `value` to continue
    /// from (``FlowOperation/saveCheckpoint(_:)``); it replaces any earlier one of that element. A
    /// journal keeps it durably, so that a resumed run hands it back (``checkpoints(at:)``), and
    /// need not wait for the disk: a checkpoint lost with a crash means only that more is done
    /// again. The engine calls it from any thread. The default does nothing.
    func checkpointed(_ value: FlowValue, at step: FlowStepID, element index: Int)

    /// The latest checkpoint of each element of the step at `step` that an earlier life of the run
    /// saved, by element index; empty for a new run. The default is empty.
    func checkpoints(at step: FlowStepID) -> [Int: FlowValue]
}

extension FlowJournal {
    public func recordedPage(at step: FlowStepID, after position: Int) -> (records: [FlowJournalRecord], next: Int?) {
        (position == 0 ? recordedResults(at: step) : [], nil)
    }

    @discardableResult
    public func mayStart(at step: FlowStepID, through index: Int) -> Bool { true }
    public func startedThrough(at step: FlowStepID) -> Int? { nil }
    public func checkpointed(_ value: FlowValue, at step: FlowStepID, element index: Int) {}
    public func checkpoints(at step: FlowStepID) -> [Int: FlowValue] { [:] }
}

/// One accepted result as a journal keeps it.
public struct FlowJournalRecord: Sendable {
    /// What the op did.
    public var result: FlowTaskResult
    /// The short id the summary shows for a group element (`[UploadFileOp 3f2a]`), `nil` for a
    /// serial op.
    public var tag: String?

    /// Creates a record.
    public init(result: FlowTaskResult, tag: String?) {
        self.result = result
        self.tag = tag
    }
}
