import Dispatch
import Foundation
@testable import Flow

/// Waits for a condition other code makes true and announces with ``changed()`` (an op that
/// started); every wait ends at its deadline, set by a Dispatch timer, not by looking again.
final class Changes: @unchecked Sendable {
    private let lock = NSLock()
    private var next = 0
    private var waiters: [Int: (condition: @Sendable () -> Bool, continuation: CheckedContinuation<Bool, Never>)] = [:]

    /// Re-checks every waiting condition; call it after each change, outside any lock a condition takes.
    func changed() {
        let waiting = lock.withLock { waiters.map { ($0.key, $0.value.condition) } }
        for (id, condition) in waiting where condition() { resume(id, with: true) }
    }

    /// Waits until `condition` holds; `false` when `timeout` passed first (the caller says what did not happen).
    func wait(timeout: Duration, until condition: @escaping @Sendable () -> Bool) async -> Bool {
        if condition() { return true }
        let id = lock.withLock { defer { next += 1 }; return next }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            lock.withLock { waiters[id] = (condition, continuation) }
            if condition() { return resume(id, with: true) }
            let (seconds, attoseconds) = timeout.components
            DispatchQueue.global().asyncAfter(deadline: .now() + Double(seconds) + Double(attoseconds) / 1e18) { [self] in
                resume(id, with: condition())
            }
        }
    }

    private func resume(_ id: Int, with value: Bool) {
        let waiter = lock.withLock { waiters.removeValue(forKey: id) }
        waiter?.continuation.resume(returning: value)
    }
}

/// Counts how many ops run at once, and the most ever seen.
final class ConcurrencyProbe: @unchecked Sendable {
    private let lock = NSLock()
    private var running = 0
    private(set) var maximum = 0
    private(set) var started: [String] = []
    /// Told of each start.
    let changes = Changes()

    func enter(_ name: String) {
        lock.withLock {
            running += 1
            maximum = max(maximum, running)
            started.append(name)
        }
        changes.changed()
    }

    func leave() {
        lock.withLock { running -= 1 }
    }

    var startedNames: [String] { lock.withLock { started } }
    var peak: Int { lock.withLock { maximum } }
}

/// A group op that echoes `item` as `result` ("out_<item>") after `item`-dependent sleep, fails for
/// items starting with "fail", and reports to a probe.
func probeRegistry(_ probe: ConcurrencyProbe, sleepMilliseconds: @escaping @Sendable (String) -> Int = { _ in 20 }) -> FlowOperationRegistry {
    var registry = FlowOperationRegistry()
    registry.register("EchoOp", primaryInputParamKey: "item", primaryOutputParamKey: "result") { _ in
        FlowClosureOperation(name: "EchoOp", primaryInputParamKey: "item", primaryOutputParamKey: "result") { op in
            let item: String = try op.value("item")
            probe.enter(item)
            defer { probe.leave() }
            try await Task.sleep(for: .milliseconds(sleepMilliseconds(item)))
            if item.hasPrefix("fail") { throw TestFailure(item: item) }
            op.set("result", "out_" + item)
        }
    }
    registry.register("PrintOp") { parameters in
        let message = try parameters.string("message", default: "")
        return FlowClosureOperation(name: "PrintOp") { op in op.log(message: message) }
    }
    return registry
}

struct TestFailure: Error, CustomStringConvertible {
    let item: String
    var description: String { "failed on \(item)" }
}

/// Summary lines without time stamps and group ids.
func masked(_ flow: Flow) -> [String] {
    flow.generateSummary().split(separator: "\n").map { line in
        String(line)
            .replacingOccurrences(of: #"^\d{1,2}:\d{2}:\d{2} (AM|PM) "#, with: "", options: .regularExpression)
            .replacingOccurrences(of: #"\[(\w+) [0-9a-f]{4}\]"#, with: "[$1 ####]", options: .regularExpression)
    }
}

func groupFlow(
    items: [Any], registry: FlowOperationRegistry, maxConcurrent: Int = 3, allowFailure: Bool = false, op: String = "EchoOp"
) -> Flow {
    Flow(definition: FlowDefinition(
        name: "group", bucket: [:],
        steps: [.group(FlowGroupStep(op: op, input: "items", output: "results",
                                     maxConcurrent: maxConcurrent, allowFailure: allowFailure))]
    ), registry: registry).setDataBucket(dataBucket: ["items": items])
}

/// Hands each batch's tasks to the local executor, a task each: the engine's batched path.
final class LocalBatchExecutor: FlowBatchExecutor, @unchecked Sendable {
    private let local: FlowLocalExecutor
    private let lock = NSLock()
    private var running: [Task<Void, Never>] = []

    init(registry: FlowOperationRegistry) {
        local = FlowLocalExecutor(registry: registry)
    }

    func execute(_ task: FlowTask) async -> FlowTaskResult { await local.execute(task) }
    func canSubmit(_ task: FlowTask) -> Bool { task.groupIndex != nil }
    func lookahead(for task: FlowTask, maxConcurrent: Int) -> Int { 2 }
    func resume(_ inbox: FlowResultInbox) {}

    func submit(_ tasks: [FlowTask], into inbox: FlowResultInbox) {
        let local = local
        let started = tasks.map { task in Task { inbox.deliver(await local.execute(task)) } }
        lock.withLock { running += started }
    }

    func cancelAll(in inbox: FlowResultInbox) {
        for task in lock.withLock({ running }) { task.cancel() }
    }
}
