package import Flow

/// One task in a TASK batch: run one op once against a bucket.
///
/// A value type whose fields live in one shared box until a copy changes one (copy on write): a
/// task is copied from the coordinator's queue into a batch, and on a worker from the batch into
/// a run, an action and the task that runs it, and a copy of the fields themselves retained each
/// string, map and element (perf: 5% of a worker's time). The box is the one `FlowTaskResult`
/// keeps its fields in too (`_FlowCopyOnWriteBox`). The id, attempt and budget id, which a
/// coordinator or pool sets on a task it was handed, sit beside the box, so setting them copies
/// nothing else.
package struct WireTask: Sendable, Hashable {
    struct Fields: Sendable, Hashable {
        var op: String
        var displayTag: String
        var parameters: [String: FlowValue]
        var bucket: [String: FlowValue]
        var groupElement: FlowValue?
        var elementIndex: Int
        var timeLimitMilliseconds: UInt32
        var operationAttempt: UInt32 = 1
        var retry: WireRetryPolicy?
        var checkpoint: FlowValue? = .none
        var placement: [WireLabel] = []
        var preference: [WireLabel] = []
        var received = ReceivedBytes()
    }

    var storage: _FlowCopyOnWriteBox<Fields>

    /// The fields a coordinator or pool changes on a task it was handed (its own id and attempt,
    /// its budget id), kept beside the box: changing one copies no box (a pool renamed every task
    /// it was submitted, and each rename copied the box the decoded SUBMIT still shared, with
    /// every field in it retained).
    var ids: Ids

    struct Ids: Sendable, Hashable {
        var taskID: UInt64
        var attempt: UInt32
        var budget: UInt64?
    }

    /// How many bytes the task took in the message it was read from, 0 for a task made here. A
    /// pool counts a client's queued bytes with it without encoding the task again; it is no
    /// field of the task, and equality ignores it.
    package internal(set) var receivedSize = 0

    /// Whether the task holds the bytes it was read from, so that writing it copies them (``ReceivedBytes``).
    package var keepsReceivedBytes: Bool { storage.value.received.fields != nil }

    /// How long a coordinator lets the task wait for a worker its placement allows before it
    /// fails (a group's `affinityTimeout:`), `nil` for its worker time-out. Kept by the coordinator
    /// that made the task; no field of the task: it is not sent, and equality ignores it.
    package var placementWait: Duration?

    @inline(__always)
    private mutating func change<Result>(_ body: (inout Fields) -> Result) -> Result {
        storage.change(body)
    }

    /// Changes a field whose bytes a relayed task keeps (``ReceivedBytes``), and forgets them.
    @inline(__always)
    private mutating func changeReceived(_ body: (inout Fields) -> Void) {
        storage.change { fields in
            body(&fields)
            fields.received = ReceivedBytes()
        }
    }

    /// Identifies the task for the whole run; the RESULT carries it back.
    package var taskID: UInt64 {
        get { ids.taskID }
        set { ids.taskID = newValue }
    }
    /// 1 for the first dispatch, one more for each re-dispatch after a worker was lost.
    package var attempt: UInt32 {
        get { ids.attempt }
        set { ids.attempt = newValue }
    }
    /// The registered op name to run.
    package var op: String {
        get { storage.value.op }
        set { changeReceived { $0.op = newValue } }
    }
    /// A short tag shown in the summary beside the op (e.g. `3f2a` for a group element), empty for
    /// a serial op.
    package var displayTag: String {
        get { storage.value.displayTag }
        set { changeReceived { $0.displayTag = newValue } }
    }
    /// The op's parameters.
    package var parameters: [String: FlowValue] {
        get { storage.value.parameters }
        set { changeReceived { $0.parameters = newValue } }
    }
    /// The op's input bucket for a serial op; empty for a group element.
    package var bucket: [String: FlowValue] {
        get { storage.value.bucket }
        set { changeReceived { $0.bucket = newValue } }
    }
    /// The array element a group element task runs on, `nil` for a serial op (flags bit 0).
    ///
    /// The worker runs the op with `[primaryInputParamKey: element]` as its bucket: the op, which
    /// only the worker instantiates, is the one that knows that key.
    package var groupElement: FlowValue? {
        get { storage.value.groupElement }
        set { changeReceived { $0.groupElement = newValue } }
    }
    /// The element's index in its group (0 for a serial op); it travels with the task and comes
    /// back in the RESULT, so the coordinator puts the output in its place without a lookup.
    package var elementIndex: Int {
        get { storage.value.elementIndex }
        set { changeReceived { $0.elementIndex = newValue } }
    }
    /// How long the op may run, in milliseconds; 0 means no limit.
    package var timeLimitMilliseconds: UInt32 {
        get { storage.value.timeLimitMilliseconds }
        set { change { $0.timeLimitMilliseconds = newValue } }
    }
    /// Which try of the op this is, as the op sees it (``FlowOperation/attempt``): more than 1 for
    /// a retry, or for an element of a resumed run that may have run before the run stopped. Sent
    /// (flags bit 1) only to workers that announced ``WireReady/Feature/operationAttempt``.
    package var operationAttempt: UInt32 {
        get { storage.value.operationAttempt }
        set { change { $0.operationAttempt = newValue } }
    }
    /// The step's `retry:`, for ops that retry parts of their work alone
    /// (``FlowOperation/retryPolicy``); `nil` for no retry. Sent (flags bit 2) only to workers
    /// that announced ``WireReady/Feature/retryPolicy``.
    package var retry: WireRetryPolicy? {
        get { storage.value.retry }
        set { change { $0.retry = newValue } }
    }

    /// The group budget whose bytes rate the op's progress draws from (RATE, flags bit 3), `nil`
    /// for none. Sent only to workers that announced ``WireReady/Feature/progress``.
    package var budget: UInt64? {
        get { ids.budget }
        set { ids.budget = newValue }
    }

    /// The op's last saved checkpoint (``FlowOperation/checkpoint``), flags bit 4, sent only to
    /// workers that announced ``WireReady/Feature/checkpoint``. Present (`.null` when the op saved
    /// none yet) means the coordinator takes CHECKPOINTs for this task; `nil` means it does not.
    package var checkpoint: FlowValue? {
        get { storage.value.checkpoint }
        set { change { $0.checkpoint = newValue } }
    }

    /// The labels a worker must have to run it (the step's `on:`), sorted by key; empty for any
    /// worker. Flags bit 5, only in a SUBMIT to a pool that set WELCOME's bit 3 (§14.4): a
    /// coordinator or pool places the task itself and never sends it to a worker in a TASK.
    package var placement: [WireLabel] {
        get { storage.value.placement }
        set { change { $0.placement = newValue } }
    }

    /// Labels a worker should have to run it, when a worker with them (and ``placement``) is
    /// connected; otherwise ignored (a group's `affinity: prefer`). Flags bit 6, only in a SUBMIT
    /// to a pool that set WELCOME's bit 3, as ``placement``.
    package var preference: [WireLabel] {
        get { storage.value.preference }
        set { change { $0.preference = newValue } }
    }

    /// Whether the task is one element of a group.
    package var isGroupElement: Bool {
        // Pattern-matched: `FlowValue` is `ExpressibleByNilLiteral`, so `!= nil` is ambiguous.
        if case .some = storage.value.groupElement { return true }
        return false
    }

    /// Creates a task.
    package init(
        taskID: UInt64,
        attempt: UInt32 = 1,
        op: String,
        displayTag: String = "",
        parameters: [String: FlowValue] = [:],
        bucket: [String: FlowValue] = [:],
        groupElement: FlowValue? = .none,
        elementIndex: Int = 0,
        timeLimitMilliseconds: UInt32 = 0
    ) {
        storage = _FlowCopyOnWriteBox(Fields(op: op, displayTag: displayTag, parameters: parameters,
                                 bucket: bucket, groupElement: groupElement, elementIndex: groupElement == nil ? 0 : elementIndex,
                                 timeLimitMilliseconds: timeLimitMilliseconds))
        ids = Ids(taskID: taskID, attempt: attempt, budget: nil)
    }

    package static func == (lhs: WireTask, rhs: WireTask) -> Bool {
        lhs.ids == rhs.ids && (lhs.storage.sharesStorage(with: rhs.storage) || lhs.storage.value == rhs.storage.value)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(ids)
        hasher.combine(storage.value)
    }
}
