import Foundation

extension FlowEngine {
    /// Runs a group's elements on the engine's own task, one after another
    /// (``FlowGroupDrive/oneAtATime``): no child task to hand results over, and no thread to wake
    /// for each one.
    ///
    /// - Parameters:
    ///   - feed: the elements' tasks.
    ///   - results: where each result goes (``settle(_:at:)``).
    func runOneAtATime(from feed: FlowGroupFeed, plan: FlowGroupPlan, resolvedPlan: FlowGroupPlan,
                       results group: FlowGroupElementsAt) async -> Outcome? {
        let runElement = elementRunner(plan, resolvedPlan: resolvedPlan)
        while true {
            if Task.isCancelled { return .cancelled }
            guard let task = await feed.nextWhenJudged() else { return nil }
            let result = await runElement(task)
            if Task.isCancelled { return .cancelled }
            if let stop = settle(result, at: group) { return stop }
        }
    }

    /// Runs a group's elements on `maxConcurrent` child tasks (``FlowGroupDrive/pulling``) that
    /// each take the next element from the feed as soon as theirs is done (under the step's retry
    /// policy and time limit), and deliver its result to an inbox the engine empties a burst at a
    /// time. No Swift task is made per element, and the engine wakes once per burst of results,
    /// not once per result: what makes an in-process group of small ops fast.
    ///
    /// - Parameters:
    ///   - feed: the elements' tasks.
    ///   - results: where each result goes (``settle(_:at:)``).
    func runPulling(from feed: FlowGroupFeed, plan: FlowGroupPlan, resolvedPlan: FlowGroupPlan,
                    results group: FlowGroupElementsAt) async -> Outcome? {
        // Known from the start for an array; for a file once its last element is handed out,
        // before that element's result can arrive.
        if feed.expected == 0 { return nil }
        let runElement = elementRunner(plan, resolvedPlan: resolvedPlan)
        let inbox = FlowResultInbox()
        // A child that finds the last element out (a stream ended) wakes the engine to look at
        // ``FlowGroupFeed/expected`` again.
        feed.setWaker { inbox.wake() }
        return await withTaskGroup(of: Void.self) { children in
            for _ in 0..<min(plan.maxConcurrent, feed.expected ?? Int.max) {
                children.addTask {
                    while !Task.isCancelled, let task = await feed.nextWhenJudged() {
                        let result = await runElement(task)
                        if result.state.isSuccess {
                            inbox.deliver(result)
                        } else {
                            // No element starts until the engine has judged this one: it may
                            // end the group.
                            feed.judging { inbox.deliver(result) }
                        }
                    }
                }
            }
            /// Stops handing out elements and stops the running ones.
            func stopAll() {
                feed.close()
                children.cancelAll()
            }
            var received = 0
            while received < feed.expected ?? Int.max {
                let results = await inbox.next()
                if Task.isCancelled {
                    stopAll()
                    return .cancelled
                }
                for result in results {
                    received += 1
                    if let stop = settle(result, at: group) {
                        stopAll()
                        return stop
                    }
                    if !result.state.isSuccess { feed.judged() }
                }
            }
            return nil
        }
    }
}
