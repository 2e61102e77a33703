import Foundation

extension FlowEngine {
    /// Runs a group's elements through a batch executor (``FlowGroupDrive/batched(_:lookahead:)``):
    /// up to `maxConcurrent` handed over at once, each burst of results taken together and its
    /// freed places refilled with one call. Elements are tried once (a group with `retry` goes
    /// through ``execute(_:policy:renew:)``).
    ///
    /// - Parameters:
    ///   - feed: the elements' tasks.
    ///   - results: where each result goes (``settle(_:at:)``).
    func runBatched(on executor: any FlowBatchExecutor, lookahead: Int, plan: FlowGroupPlan, feed: FlowGroupFeed,
                    results group: FlowGroupElementsAt) async -> Outcome? {
        // With a lookahead the executor holds a few tasks more than may run, and keeps to
        // `maxConcurrent` itself.
        let inbox = FlowResultInbox(concurrencyLimit: lookahead > 0 ? plan.maxConcurrent : nil)
        var running = 0
        func refill() {
            var tasks: [FlowTask] = []
            // Sized at once: grown by appends, the array of these large values was copied at
            // each doubling (callgrind: the most copied bytes of a coordinator's group).
            tasks.reserveCapacity(max(0, plan.maxConcurrent + lookahead - running))
            while running + tasks.count < plan.maxConcurrent + lookahead, let task = feed.next() {
                tasks.append(task)
            }
            guard !tasks.isEmpty else { return }
            running += tasks.count
            executor.submit(tasks, into: inbox)
        }
        // Elements a serial op emits arrive while the group runs: the inbox is woken to refill.
        feed.setWaker { inbox.wake() }
        refill()
        while running > 0 || !feed.isFinished {
            let results = await inbox.next()
            if Task.isCancelled {
                executor.cancelAll(in: inbox)
                return .cancelled
            }
            var judgedFailure = false
            for result in results {
                running -= 1
                if let stop = settle(result, at: group) {
                    executor.cancelAll(in: inbox)
                    return stop
                }
                if !result.state.isSuccess { judgedFailure = true }
            }
            // The failures did not end the group: the tasks held ahead may start.
            if judgedFailure, lookahead > 0 { executor.resume(inbox) }
            refill()
        }
        return nil
    }
}
