import Foundation

/// How a group's elements are run, chosen once per group (``FlowEngine/drive(for:resolvedPlan:first:tags:)``).
enum FlowGroupDrive {
    /// Handed over in bursts to an executor that takes batches (``FlowBatchExecutor``, as a
    /// cluster's coordinator), each burst of results taken in one wake-up
    /// (``FlowEngine/runBatched(on:lookahead:plan:feed:results:)``). Chosen when the step does not
    /// retry and the executor says it takes the group's tasks as they are.
    case batched(any FlowBatchExecutor, lookahead: Int)
    /// Run by the engine's own task, one after another: no child task to hand results over and no
    /// thread to wake for each (``FlowEngine/runOneAtATime(from:plan:resolvedPlan:results:)``).
    /// Chosen when the group is not batched and its `maxConcurrent` is 1.
    case oneAtATime
    /// Pulled from the feed by `maxConcurrent` child tasks, their results taken a burst at a time
    /// (``FlowEngine/runPulling(from:plan:resolvedPlan:results:)``). Chosen for every other group.
    case pulling
}

extension FlowEngine {
    /// The drive for a group (see ``FlowGroupDrive``'s cases for when each is chosen).
    func drive(for plan: FlowGroupPlan, resolvedPlan: FlowGroupPlan, first: Any, tags: FlowGroupTags) -> FlowGroupDrive {
        if let batch = executor as? any FlowBatchExecutor, plan.policy.retry.attempts <= 1 {
            let task = FlowGroupFeed.task(resolvedPlan, tags: tags, index: 0, element: first)
            if batch.canSubmit(task) {
                return .batched(batch, lookahead: max(0, batch.lookahead(for: task, maxConcurrent: plan.maxConcurrent)))
            }
        }
        return plan.maxConcurrent == 1 ? .oneAtATime : .pulling
    }

    /// Runs one element's task in this engine's drives (not batched): under the step's retry
    /// policy and time limit, with a fresh op for each further try of an op given by its type.
    func elementRunner(_ plan: FlowGroupPlan, resolvedPlan: FlowGroupPlan) -> @Sendable (FlowTask) async -> FlowTaskResult {
        let renew = freshOperation(for: resolvedPlan)
        let policy = plan.policy
        return { task in await execute(task, policy: policy, renew: renew) }
    }

    /// For a group of op instances, a maker of fresh ones, so a retry never reuses a finished op.
    private func freshOperation(for plan: FlowGroupPlan) -> (@Sendable () -> FlowTask.Operation)? {
        guard plan.policy.retry.attempts > 1, case .creator(let creator) = plan.source else { return nil }
        return { .instance(creator.create()) }
    }
}
