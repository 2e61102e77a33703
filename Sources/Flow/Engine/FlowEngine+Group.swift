import Foundation

extension FlowEngine {
    /// How many replayed results a group takes back before it yields its thread once.
    static let replayTurn = 2_048

    /// Runs a group: one task per element of the input array (or of the input file, read a page
    /// at a time), at most `maxConcurrent` at once, each under the step's retry policy and time
    /// limit; outputs of successful elements are collected in input order (or written to the
    /// output file as they come). Failures beyond the step's budget (`allowFailure`,
    /// `maxFailures`) stop it.
    ///
    /// - Parameter stream: the pages the serial op before it emits, read in place of the input.
    func runGroup(_ plan: FlowGroupPlan, id: FlowStepID, stream: FlowElementStream? = nil) async -> Outcome? {
        let operationName = groupOperationName(plan)
        let listing: FlowGroupListing
        var source: FlowGroupSource
        switch openSource(plan, id: id, operation: operationName, stream: stream) {
        case .source(let opened, let known):
            (source, listing) = (opened, known)
        case .end(let end):
            return end
        }
        let streamed = listing.total == nil
        if streamed {
            // The count comes with the pages (groupListed), the first of them next.
            run.progress(.groupStarted(operation: operationName, total: nil, maxConcurrent: plan.maxConcurrent))
        }
        guard case .element(let first) = await firstElement(of: &source, plan: plan, stream: stream) else {
            return .failed(source.failure.map { FlowError.inputData($0.description) }
                           ?? FlowError.emptyGroupInput(key: plan.inputFile.map { "file \($0.path)" } ?? plan.inputKey))
        }
        let count = listing.total
        if !streamed {
            run.progress(.groupStarted(operation: operationName, total: count, maxConcurrent: plan.maxConcurrent))
        }
        let tally: FlowGroupTally
        do { tally = try Self.tally(plan, listing: listing, progress: source.listingProgress) } catch { return .failed(error) }
        defer { run.progress(.groupFinished(operation: operationName, done: tally.done, failed: tally.failures.count, total: listing.total)) }

        let resolvedPlan: FlowGroupPlan
        switch resolved(plan, elementCount: count) {
        case .plan(let plan): resolvedPlan = plan
        case .unresolved(let end): return end
        }
        // Tasks are made as elements start, so a million-element group holds at most
        // `maxConcurrent` of them; outputs are collected in place, a marker standing for the
        // elements that gave none.
        journal?.groupStarted(at: id, total: listing.listed)
        let accept = acceptor(for: plan, tally: tally)
        // Elements an earlier life of this run finished are taken as they were, not run again.
        let recordedAs: String? = if case .named(let name, _) = plan.source { name } else { nil }
        let replay = await replayRecorded(at: id, count: count, operation: recordedAs, location: plan.location, accept: accept)
        if let stop = replay.stop { return stop }
        // Elements start in index order, from a feed that tells the journal ahead how far they
        // may have started.
        let tags = FlowGroupTags()
        let feed = FlowGroupFeed(plan: resolvedPlan, source: source, tags: tags, replayed: replay.replayed,
                                 journal: journal, id: id) { [run] in
            // As ``journalRefused()``: the run stops as a cancelled one, which also wakes the
            // engine waiting for results of elements that will not come.
            run.stop()
        }
        let elementsAt = FlowGroupElementsAt(id: id, tags: tags, keepsOutputs: !plan.outputKey.isEmpty || plan.outputFile != nil,
                                             accept: accept)
        let stop = await run(feed, plan: plan, resolvedPlan: resolvedPlan, first: first, results: elementsAt)
        return finishGroup(plan, tally: tally, stop: stop, feed: feed)
    }

    /// What the group counts and collects: its outputs in an array (with an `output:` key), or in
    /// its output file; for a group fed by a listing, how far every element has succeeded.
    private static func tally(_ plan: FlowGroupPlan, listing: FlowGroupListing, progress: (any FlowListingProgress)?) throws
        -> FlowGroupTally {
        FlowGroupTally(listing: listing, collecting: !plan.outputKey.isEmpty,
                       outputFile: try plan.outputFile.map(FlowGroupOutputFile.init(path:)),
                       successMark: progress.map(FlowSuccessMark.init(stream:)))
    }

    /// Runs the feed's elements in the drive chosen for the group (``FlowGroupDrive``).
    private func run(_ feed: FlowGroupFeed, plan: FlowGroupPlan, resolvedPlan: FlowGroupPlan, first: Any,
                     results: FlowGroupElementsAt) async -> Outcome? {
        switch drive(for: plan, resolvedPlan: resolvedPlan, first: first, tags: results.tags) {
        case .batched(let executor, let lookahead):
            await runBatched(on: executor, lookahead: lookahead, plan: plan, feed: feed, results: results)
        case .oneAtATime:
            await runOneAtATime(from: feed, plan: plan, resolvedPlan: resolvedPlan, results: results)
        case .pulling:
            await runPulling(from: feed, plan: plan, resolvedPlan: resolvedPlan, results: results)
        }
    }

    /// The group's first element, waiting for the first page of a stream (it has arrived, or is
    /// about to: ``FlowElementStream/secondPageOrEnd()``), and the group's first lines; `.end`
    /// (logged) when there is none: the input is empty, or its first page could not be read.
    private func firstElement(of source: inout FlowGroupSource, plan: FlowGroupPlan, stream: FlowElementStream?) async
        -> FlowGroupSource.Lookup {
        var lookup = source.lookup(source.startIndex)
        while case .notYet(let version) = lookup, let stream {
            await stream.waitForChange(after: version)
            lookup = source.lookup(source.startIndex)
        }
        guard case .element = lookup else {
            if let failure = source.failure {
                run.log("[Group] \(failure)")
            } else {
                run.log("[FlowArrayGroupDispatcher] group created: 0")
                let input = plan.inputFile.map { "file \($0.path)" } ?? plan.inputKey
                run.log("[Group] no operation to run for group; please make sure the input data: <\(input)> is not empty")
            }
            return .end
        }
        let from = plan.inputFile.map { "from \($0.path)" } ?? "from the pages the step before emits"
        let count = source.isComplete ? source.listed : stream?.finishedCount
        run.log("[FlowArrayGroupDispatcher] group created: " + (count.map(String.init) ?? from))
        return lookup
    }

    /// A group's elements, opened, and how many are known.
    private enum OpenedSource {
        case source(FlowGroupSource, FlowGroupListing)
        case end(Outcome?)
    }

    /// The group's elements: the bucket array at its input key, or its input file opened (whose
    /// pages, as they are read, tell the journal and the progress how many are known).
    private func openSource(_ plan: FlowGroupPlan, id: FlowStepID, operation: String, stream: FlowElementStream?) -> OpenedSource {
        let progress = run.progressHandler
        let journal = journal
        if let stream {
            // Known when the op has finished already (a list of one page).
            let listing = FlowGroupListing(count: stream.finishedCount)
            let source = FlowGroupSource(stream: stream) { listed, complete in
                guard listing.update(listed: listed, isComplete: complete) else { return }
                journal?.groupStarted(at: id, total: listed)
                progress?(.groupListed(operation: operation, listed: listed, complete: complete))
            }
            return .source(source, listing)
        }
        guard let input = plan.inputFile else {
            guard let elements = FlowGroupElements(run.bucket[plan.inputKey]) else {
                run.log("[FlowArrayGroupDispatcher] group created: 0")
                run.log("[Group] no operation to run for group; please make sure the input data: <\(plan.inputKey)> is not empty")
                return .end(.failed(FlowError.emptyGroupInput(key: plan.inputKey)))
            }
            // An affinity group's hosts take turns: a listing joined host after host keeps every
            // host's workers busy from the start.
            return .source(FlowGroupSource(array: elements, interleavingHosts: plan.policy.affinity != nil),
                           FlowGroupListing(count: elements.count))
        }
        let listing = FlowGroupListing(count: nil)
        do {
            // With a journal, where each page began: a resumed run reads on from its checkpoint.
            let fileListing = journal.map { FlowFileListing(journal: $0, step: id) }
            let source = try FlowGroupSource(file: input, fileListing: fileListing) { listed, complete in
                listing.update(listed: listed, isComplete: complete)
                journal?.groupStarted(at: id, total: listed)
                progress?(.groupListed(operation: operation, listed: listed, complete: complete))
            }
            return .source(source, listing)
        } catch {
            run.log("[Group] \(error)")
            return .end(.failed(FlowError.inputData("\(error)")))
        }
    }

    /// A group's plan with its parameters resolved, or the end of a group whose parameters
    /// could not be.
    private enum GroupResolution {
        case plan(FlowGroupPlan)
        case unresolved(Outcome?)
    }

    /// The plan with its named op's parameters resolved against the bucket (`${key}` templates)
    /// and prepared for a group of `elementCount` elements (`nil`: not known yet).
    private func resolved(_ plan: FlowGroupPlan, elementCount: Int?) -> GroupResolution {
        guard case .named(let name, let parameters) = plan.source else { return .plan(plan) }
        do {
            var resolvedPlan = plan
            resolvedPlan.source = .named(name, parameters: try executor.resolveGroupParameters(of: name, parameters, bucket: run.bucket,
                                                                                                elementCount: elementCount))
            return .plan(resolvedPlan)
        } catch {
            return .unresolved(reportUnresolved(error, operation: name, location: plan.location))
        }
    }

    /// The group's end once its drive returned: the drive's own stop, `.cancelled` when the
    /// journal refused more starts, or the collected outputs written to the bucket.
    private func finishGroup(_ plan: FlowGroupPlan, tally: FlowGroupTally, stop: Outcome?, feed: FlowGroupFeed) -> Outcome? {
        let total = tally.total
        if tally.retries > 0 {
            run.log("[Group] \(tally.retries) retries for \(tally.retriedElements) of \(total) elements")
        }
        let written = tally.outputFile?.finish()
        if let stop { return stop }
        // The feed ran dry because the journal refused, not because every element ran.
        if feed.wasRefused { return .cancelled }
        if let failure = feed.inputFailure {
            run.log("[Group] \(failure): the group stops after \(tally.done) elements")
            return .failed(FlowError.inputData(failure.description))
        }
        if let written {
            run.log("[Group] \(written)")
            return .failed(FlowError.inputData(written))
        }
        if !tally.failures.isEmpty { logFailures(tally.failures, total: total, plan: plan) }
        if plan.outputKey.isEmpty {
            run.log("[FlowArrayGroupDispatcher] all finished. elements: \(tally.done)" + (tally.outputFile.map { ", outputs in \($0.path)" } ?? ""))
            return nil
        }
        let outputs = tally.takeOutputs()
        run.setBucketValue(outputs, forKey: plan.outputKey)
        run.log("[FlowArrayGroupDispatcher] all finished. output size: \(outputs.count)")
        return nil
    }

    /// The group's closing count and one line per failed element, in input order.
    private func logFailures(_ failures: [(result: FlowTaskResult, tag: String?)], total: Int, plan: FlowGroupPlan) {
        let allowance = plan.allowFailure ? "allowFailure" : "maxFailures: \(plan.maxFailures?.description ?? "0")"
        run.log("[Group] \(failures.count) of \(total) elements failed (within \(allowance)):")
        for (result, tag) in failures.sorted(by: { ($0.result.groupIndex ?? 0) < ($1.result.groupIndex ?? 0) }) {
            let index = result.groupIndex ?? 0
            let label = FlowLabel.make(name: result.operationName, tag: tag, worker: result.worker)
            run.log("[Group]   element \(index) \(label): \(result.state.failureText)")
        }
    }

    func groupOperationName(_ plan: FlowGroupPlan) -> String {
        switch plan.source {
        case .creator(let creator): return String(describing: creator)
        case .named(let name, _): return name
        }
    }
}
