import Foundation

/// Runs a flow as a dry run, in this process: ops that only read run as usual, ops that
/// rehearse run with ``FlowOperation/isDryRun`` true (a ``FlowDryRunRehearsing`` op runs its
/// ``FlowDryRunRehearsing/rehearse(in:)`` instead of its logic), and ops that write are not run at all (their
/// tasks succeed at once, with no output and the line `not run: dry run (the op writes)`). What
/// it met is in ``plan``.
///
/// ```swift
/// let executor = FlowDryRunExecutor(registry: registry)
/// let flow = Flow(definition: definition, registry: registry).setExecutor(executor)
/// await flow.run()
/// print(executor.plan.text())
/// ```
///
/// An op's ``FlowOperation/dryRunRole`` decides, `writes` unless the op says otherwise, so
/// an op nobody marked is never run. An op name the registry does not know fails its task, as in
/// a real run, except an op the registry does not know (offered by remote workers only), which
/// is not run either. A step after one that was not run sees no output from it.
public final class FlowDryRunExecutor: FlowExecutor {
    /// The registry named ops are built from.
    public let registry: FlowOperationRegistry
    private let local: FlowLocalExecutor
    /// A pthread mutex, not `Mutex`: ThreadSanitizer cannot see `Mutex`'s futex, and reported the
    /// steps' counts below as raced when a group's elements were recorded side by side.
    private let state = FlowLocked.make(State())

    private struct State {
        var plan = FlowDryRunPlan()
        var stepIndex: [String: Int] = [:]
    }

    /// Creates a dry-run executor.
    ///
    /// - Parameter registry: the ops flow files name.
    public init(registry: FlowOperationRegistry) {
        self.registry = registry
        local = FlowLocalExecutor(registry: registry)
    }

    /// What the dry run has met so far: every step, in order.
    public var plan: FlowDryRunPlan {
        state.withLock { $0.plan }
    }

    public func resolveParameters(of name: String, _ parameters: [String: FlowValue], bucket: [String: Any]) throws -> [String: FlowValue] {
        try registry.resolveParameters(of: name, parameters, bucket: bucket)
    }

    public func resolveGroupParameters(of name: String, _ parameters: [String: FlowValue], bucket: [String: Any],
                                       elementCount: Int?) throws -> [String: FlowValue] {
        try registry.resolveGroupParameters(of: name, parameters, bucket: bucket, elementCount: elementCount)
    }

    public func execute(_ task: FlowTask) async -> FlowTaskResult {
        let operation: FlowOperation
        switch task.operation {
        case .instance(let instance):
            operation = instance
        case .named(let name, let parameters):
            do {
                operation = try registry.makeOperation(named: name, parameters: parameters)
            } catch FlowError.unknownOperation {
                // Offered by remote workers only (`run --bind`): what it does is not known here.
                record(task, role: .writes, notes: [], failed: false)
                return Self.notRun(task, why: "the op is not known here, so it may write")
            } catch {
                record(task, role: .writes, notes: [], failed: true)
                return .failure(error, for: task)
            }
        }
        let rehearsing = operation as? any FlowDryRunRehearsing
        let role = rehearsing == nil ? operation.dryRunRole : .rehearses
        guard role != .writes else {
            record(task, role: role, notes: [], failed: false)
            return Self.notRun(task)
        }
        let running: FlowOperation = rehearsing.map(FlowRehearsalOperation.init) ?? operation
        running.beginDryRun()
        var inner = task
        inner.operation = .instance(running)
        let result = await local.execute(inner)
        record(task, role: role, notes: running.takeDryRunNotes(), failed: !result.state.isSuccess)
        return result
    }

    /// A writer's task, done without running it.
    static func notRun(_ task: FlowTask, why: String = "the op writes") -> FlowTaskResult {
        let now = Date()
        var result = FlowTaskResult(operationName: task.operationName, state: .successfully,
                                    events: [FlowRecordedEvent(time: now, kind: .log("not run: dry run (\(why))"))],
                                    bucket: [:], startedAt: now, finishedAt: now, attempt: task.operationAttempt)
        result.groupIndex = task.groupIndex
        return result
    }

    private func record(_ task: FlowTask, role: FlowDryRunRole, notes: [FlowDryRunNote], failed: Bool) {
        let key = task.operationName + "@" + (task.location?.description ?? "")
        state.withLock { state in
            let index: Int
            if let known = state.stepIndex[key] {
                index = known
            } else {
                index = state.plan.steps.count
                state.stepIndex[key] = index
                state.plan.steps.append(FlowDryRunPlan.Step(operationName: task.operationName, location: task.location, role: role))
            }
            state.plan.steps[index].tasks += 1
            if failed { state.plan.steps[index].failed += 1 }
            for note in notes { state.plan.steps[index].add(note) }
        }
    }
}
