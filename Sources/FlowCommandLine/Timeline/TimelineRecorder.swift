import Flow
import FlowCluster
import Foundation
import Synchronization

/// Collects what `--timeline FILE.html` draws, as the run goes: every op attempt (op, element,
/// worker, times, state, last log line) in columns, the flow's steps, and the workers joining and
/// leaving. It keeps a few numbers per attempt, so a run of a million elements stays small, and
/// reads the progress events the terminal does, so it sees every element whatever the summary
/// keeps.
final class TimelineRecorder: Sendable {
    /// Attempts past this many keep no log line (the file stays small); failed ones always do.
    static let loggedAttempts = 20_000
    /// Log lines are cut to this many characters.
    static let logLength = 300

    private let state: Mutex<TimelineData>
    private let clock = Mutex<Date>(Date())

    /// A recorder for the flow named `flow`.
    init(flow: String) {
        state = Mutex(TimelineData(flow: flow))
    }

    /// Sets the run's start: every time is drawn relative to it.
    func begin(at start: Date = Date()) {
        clock.withLock { $0 = start }
        state.withLock { data in
            data.startedAt = start
            // Workers that joined while the cluster started stand at the run's start.
            for index in data.events.indices { data.events[index].atMs = 0 }
            // So does a pause the run started with (resumed as it was paused).
            for index in data.marks.indices { data.marks[index].atMs = 0 }
        }
    }

    private func milliseconds(_ date: Date) -> Double {
        let start = clock.withLock { $0 }
        return (date.timeIntervalSince(start) * 1000 * 1000).rounded() / 1000
    }

    /// Follows the flow: steps as they start and end, attempts as ops finish.
    func record(_ event: FlowProgressEvent) {
        let now = milliseconds(Date())
        switch event {
        case .operationStarted(let name):
            state.withLock { $0.steps.append(.init(name: name, kind: "serial", startMs: now, endMs: now)) }
        case .operationFinished(let record):
            let attempts = attempts(of: record)
            state.withLock { data in
                data.add(attempts)
                if let open = data.steps.lastIndex(where: { $0.kind == "serial" && $0.name == record.operationName }) {
                    data.steps[open].endMs = now
                }
            }
        case .groupStarted(let operation, let total, _):
            state.withLock {
                $0.steps.append(.init(name: operation, kind: "group", startMs: now, endMs: now, elements: total, failed: 0))
            }
        case .groupListed:
            break
        case .groupElementFinished(let record, _, _, _):
            // A resumed run takes the elements its journal has as they were: they ran before this
            // run began, so they are counted, not drawn.
            if record.finishedAt < clock.withLock({ $0 }) {
                state.withLock { $0.earlierElements += 1 }
                return
            }
            let attempts = attempts(of: record)
            state.withLock { $0.add(attempts) }
        case .groupFinished(let operation, _, let failed, let total):
            state.withLock { data in
                if let open = data.steps.lastIndex(where: { $0.kind == "group" && $0.name == operation }) {
                    data.steps[open].endMs = now
                    data.steps[open].elements = total
                    data.steps[open].failed = failed
                }
            }
        }
    }

    /// Follows the cluster: workers that join (with their slots), leave or are lost, and the
    /// attempts that were running on them then; the run paused and continued, and groups
    /// throttled by the store.
    func record(_ event: ClusterEvent) {
        let now = milliseconds(Date())
        state.withLock { data in
            switch event {
            case .workerJoined(let name, _, let slots, _):
                let index = data.worker(name)
                data.slots[index] = max(data.slots[index], slots)
                data.events.append(.init(kind: "workerJoined", worker: index, atMs: now, text: event.description))
            case .workerLost(let name, _, _):
                data.events.append(.init(kind: "workerLost", worker: data.worker(name), atMs: now, text: event.description))
            case .workerLeft(let name, _, _):
                data.events.append(.init(kind: "workerLeft", worker: data.worker(name), atMs: now, text: event.description))
            case .taskLost(let worker, let op, let element, let attempt, let ranFor):
                // The attempt that was running there: a bar that ends where the worker went away.
                let ran = ranFor.seconds * 1000
                data.add([TimelineData.Attempt(op: op, element: element ?? -1, attempt: attempt, worker: worker,
                                               startMs: max(0, now - ran), endMs: now, state: .lost,
                                               log: "\(worker) went away while this ran")])
            case .paused, .continued:
                data.marks.append(.init(kind: event == .paused ? "paused" : "continued", atMs: now, text: event.description))
            case .throttled(let step, let concurrency, let maxConcurrent, _):
                data.marks.append(.init(kind: "throttled", atMs: now, step: step, concurrency: concurrency, maxConcurrent: maxConcurrent,
                                        text: event.description))
            case .unthrottled(let step, let maxConcurrent):
                data.marks.append(.init(kind: "unthrottled", atMs: now, step: step, concurrency: maxConcurrent, maxConcurrent: maxConcurrent,
                                        text: event.description))
            default:
                break
            }
        }
    }

    /// Records how the run ended.
    func finish(succeeded: Bool, error: String?) {
        let now = milliseconds(Date())
        state.withLock { data in
            data.durationMs = now
            data.succeeded = succeeded
            data.error = error
        }
    }

    /// The page: the template with the data in it.
    func html() throws -> String {
        try TimelinePage.render(state.withLock { $0 })
    }

    /// Writes the page to `path` (through a temporary file, so a reader never sees half of it).
    func write(to path: String) throws {
        let page = try html()
        let url = URL(fileURLWithPath: path)
        try Data(page.utf8).write(to: url, options: .atomic)
    }

    private func attempts(of record: FlowOperationRecord) -> [TimelineData.Attempt] {
        var attempts = record.earlierAttempts.map { earlier in
            TimelineData.Attempt(op: record.operationName, element: record.groupIndex ?? -1, attempt: earlier.attempt,
                                 worker: earlier.worker ?? "coordinator", startMs: milliseconds(earlier.startedAt),
                                 endMs: milliseconds(earlier.finishedAt), state: .retried, log: earlier.state.failureText)
        }
        let state: TimelineData.State
        let log: String?
        switch record.state {
        case .successfully:
            state = .succeeded
            log = record.logLines.last?.text
        case .cancelled:
            state = .cancelled
            log = record.logLines.last?.text
        case .withError, .withInsufficientInputData, .withMismatchInputDataType:
            state = .failed
            log = record.state.failureText
        }
        attempts.append(TimelineData.Attempt(op: record.operationName, element: record.groupIndex ?? -1, attempt: record.attempt,
                                             worker: record.worker ?? "coordinator", startMs: milliseconds(record.startedAt),
                                             endMs: milliseconds(record.finishedAt), state: state, log: log))
        return attempts
    }
}
