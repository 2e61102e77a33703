import Foundation

/// What the timeline page draws, in the shape its script reads (`timeline.html`): attempts as
/// columns of numbers (a million attempts are a few arrays, not a million objects), with tables
/// of op and worker names they index.
struct TimelineData: Encodable, Sendable {
    /// How an attempt ended, as the page colours it.
    enum State: Int, CaseIterable {
        case succeeded, failed, retried, cancelled, lost

        var name: String { "\(self)" }
    }

    /// One op attempt, before it is split into columns.
    struct Attempt: Sendable {
        var op: String
        var element: Int
        var attempt: Int
        var worker: String
        var startMs: Double
        var endMs: Double
        var state: State
        var log: String?
    }

    /// A step along the top: a serial op or a group.
    struct Step: Encodable, Sendable {
        var name: String
        var kind: String
        var startMs: Double
        var endMs: Double
        var elements: Int?
        var failed: Int?
    }

    /// A worker that joined, left or was lost.
    struct Event: Encodable, Sendable {
        var kind: String
        var worker: Int
        var atMs: Double
        var text: String
    }

    /// Something that happened to the whole run or to one step, not to a worker: the run paused
    /// or continued (`kind` `paused`, `continued`), a group throttled by the store or back at
    /// its `maxConcurrent` (`throttled`, `unthrottled`, with `step` and `concurrency`).
    struct Mark: Encodable, Sendable {
        var kind: String
        var atMs: Double
        var step: String?
        var concurrency: Int?
        var maxConcurrent: Int?
        var text: String
    }

    /// The attempts, one array per field.
    struct Columns: Encodable, Sendable {
        var op: [Int32] = []
        var element: [Int32] = []
        var attempt: [Int32] = []
        var worker: [Int32] = []
        var startMs: [Double] = []
        var endMs: [Double] = []
        var state: [UInt8] = []
        var log: [String?] = []
    }

    let version = 1
    var flow: String
    var startedAt = Date()
    var durationMs = 0.0
    var succeeded = false
    var error: String?
    var workers: [String] = []
    var slots: [Int] = []
    var ops: [String] = []
    var steps: [Step] = []
    var attempts = Columns()
    let stateNames = State.allCases.map(\.name)
    var events: [Event] = []
    /// Pauses and throttling, in the order they happened.
    var marks: [Mark] = []
    /// Group elements a resumed run took from its journal: finished before it began, not drawn.
    var earlierElements = 0

    private var workerIndex: [String: Int] = [:]
    private var opIndex: [String: Int] = [:]

    init(flow: String) {
        self.flow = flow
    }

    private enum CodingKeys: String, CodingKey {
        case version, flow, startedAt, durationMs, succeeded, error, workers, slots, ops, steps, attempts, stateNames, events, marks, earlierElements
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(flow, forKey: .flow)
        try container.encode(ISO8601DateFormatter.withFractionalSeconds.string(from: startedAt), forKey: .startedAt)
        try container.encode(durationMs, forKey: .durationMs)
        try container.encode(succeeded, forKey: .succeeded)
        try container.encode(error, forKey: .error)
        try container.encode(workers, forKey: .workers)
        try container.encode(slots, forKey: .slots)
        try container.encode(ops, forKey: .ops)
        try container.encode(steps, forKey: .steps)
        try container.encode(attempts, forKey: .attempts)
        try container.encode(stateNames, forKey: .stateNames)
        try container.encode(events, forKey: .events)
        try container.encode(marks, forKey: .marks)
        try container.encode(earlierElements, forKey: .earlierElements)
    }

    /// The index of the worker named `name`, adding it when it is new.
    mutating func worker(_ name: String) -> Int {
        if let known = workerIndex[name] { return known }
        workers.append(name)
        slots.append(0)
        workerIndex[name] = workers.count - 1
        return workers.count - 1
    }

    private mutating func op(_ name: String) -> Int {
        if let known = opIndex[name] { return known }
        ops.append(name)
        opIndex[name] = ops.count - 1
        return ops.count - 1
    }

    /// Adds attempts to the columns.
    mutating func add(_ attempts: [Attempt]) {
        for attempt in attempts {
            let worker = worker(attempt.worker)
            let op = op(attempt.op)
            let keepsLog = self.attempts.log.count < TimelineRecorder.loggedAttempts || attempt.state == .failed
            self.attempts.op.append(Int32(op))
            self.attempts.element.append(Int32(clamping: attempt.element))
            self.attempts.attempt.append(Int32(clamping: attempt.attempt))
            self.attempts.worker.append(Int32(worker))
            self.attempts.startMs.append(attempt.startMs)
            self.attempts.endMs.append(max(attempt.startMs, attempt.endMs))
            self.attempts.state.append(UInt8(attempt.state.rawValue))
            self.attempts.log.append(keepsLog ? attempt.log.map { String($0.prefix(TimelineRecorder.logLength)) } : nil)
        }
    }
}

extension ISO8601DateFormatter {
    /// `2026-11-24T10:00:00.123Z`.
    static var withFractionalSeconds: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
