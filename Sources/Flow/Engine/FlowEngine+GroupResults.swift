import Foundation

/// Where a group's element results go, whichever drive ran them: the group's step (for the
/// journal), its tags, and what takes each result into the summary, the counts and the outputs.
struct FlowGroupElementsAt {
    let id: FlowStepID
    let tags: FlowGroupTags
    /// Whether the group keeps its outputs (in the bucket or a file): when it does not, the
    /// journal is not given them (a no-op element's record was 9 bytes longer with its output).
    let keepsOutputs: Bool
    /// Takes one finished element; returns the group's end when it must stop.
    let accept: (FlowTaskResult, String?) -> FlowEngine.Outcome?
}

extension FlowEngine {
    /// What takes one finished element into the summary, the counts and the outputs; it returns
    /// the group's end when the group is one failure past its budget. A percentage budget of a
    /// group whose count is not known yet (an input file still being read) counts against the
    /// elements known so far.
    func acceptor(for plan: FlowGroupPlan, tally: FlowGroupTally) -> (FlowTaskResult, String?) -> Outcome? {
        let known = tally.listing.total
        let fixedLimit: Int? = plan.allowFailure ? Int.max : known.map { plan.maxFailures?.limit(total: $0) ?? 0 }
        let budget = plan.maxFailures
        // A group of unknown size is thinned and condensed as a big one (FlowElementRetention);
        // nothing is reserved for it.
        let groupMark = (number: run.groupStarts(size: known ?? 0), size: known ?? Int.max)
        // Fetched once: events nobody hears need not be made.
        let progress = run.progressHandler
        let run = run
        return { result, tag in
            let record = run.record(result, tag: tag, appliesBucketChanges: false, groupOutputKey: plan.outputKey,
                                    location: plan.location, group: groupMark)
            tally.done += 1
            if !result.earlierAttempts.isEmpty {
                tally.retries += result.earlierAttempts.count
                tally.retriedElements += 1
            }
            if !result.state.isSuccess { tally.failures.append((result, tag)) }
            if let mark = tally.successMark, let index = result.groupIndex {
                if result.state.isSuccess { mark.succeeded(index) } else { mark.failed(index) }
            }
            if let progress { progress(.groupElementFinished(record, done: tally.done, failed: tally.failures.count, total: tally.listing.total)) }
            // The seed's rule (PROTOCOL.md §7.3): only a successful element's output is collected.
            if result.state.isSuccess, let index = result.groupIndex, let output = result.groupOutput { tally.collect(output, at: index) }
            let failureLimit = fixedLimit ?? budget?.limit(total: tally.total) ?? 0
            guard tally.failures.count > failureLimit else { return nil }
            if let budget {
                run.log("[Group] \(tally.failures.count) elements failed, more than maxFailures: \(budget) allows (\(failureLimit))")
            }
            run.log("[Group] not allow failure in group. stop immediately.")
            return .failed(result.failure)
        }
    }

    /// Takes back the results an earlier life of this run recorded for the group, a page at a
    /// time in the order they were recorded (``FlowJournal/recordedPage(at:after:)``).
    ///
    /// - Returns: which elements were taken back (empty when none were), and the group's end if
    ///   one of them ends it.
    /// - Parameter operation: the op the step names, when a flow file names it: a result of
    ///   another op ends the group (``refuseRecorded(_:where:location:)``).
    func replayRecorded(at id: FlowStepID, count: Int?, operation: String?, location: FlowSourceLocation?,
                        accept: (FlowTaskResult, String?) -> Outcome?) async -> (replayed: FlowIndexBits, stop: Outcome?) {
        var replayed = FlowIndexBits()
        guard let journal else { return (replayed, nil) }
        var position: Int? = 0
        var taken = 0
        while let after = position {
            let (records, next) = journal.recordedPage(at: id, after: after)
            position = next
            for entry in records {
                // A resumed run may take back millions of results: the thread is given back now
                // and then. On a cluster it is the coordinator's I/O thread, whose heartbeats tell
                // the workers it is alive (they reconnect after 3 s without).
                taken += 1
                if taken % Self.replayTurn == 0 { await Task.yield() }
                // A count not known yet (an input file): every index is taken; one past the file's
                // end is never reached by the feed. An element recorded twice (a journal of an
                // earlier Flow) counts once.
                guard let index = entry.result.groupIndex, index >= 0, index < count ?? Int.max, !replayed.contains(index) else { continue }
                if let operation, entry.result.operationName != operation {
                    return (replayed, refuseRecorded(entry.result.operationName, where: operation, location: location))
                }
                replayed.insert(index)
                if let stop = accept(entry.result, entry.tag ?? FlowGroupTag.make()) { return (replayed, stop) }
            }
        }
        return (replayed, nil)
    }

    /// Takes one element's result: `.cancelled` for a cancelled one (which is not recorded), the
    /// group's end when the group's acceptor says so, `nil` to go on. The result reaches the
    /// journal first, with its element's tag (found again from its index).
    func settle(_ result: FlowTaskResult, at group: FlowGroupElementsAt) -> Outcome? {
        if case .cancelled = result.state { return .cancelled }
        let tag = group.tags.tag(for: result.groupIndex ?? 0)
        if group.keepsOutputs || result.groupOutput == nil {
            journalAccepted(result, tag: tag, at: group.id)
        } else {
            var journaled = result
            journaled.groupOutput = nil
            journalAccepted(journaled, tag: tag, at: group.id)
        }
        return group.accept(result, tag)
    }
}
