extension FlowEngine {
    /// A serial step as ``runList(_:in:branch:)`` found it.
    struct SerialStep {
        let reference: FlowOperationReference
        let location: FlowSourceLocation?
        let policy: FlowTaskPolicy
        let id: FlowStepID
    }

    /// Runs a serial step and the group after it that reads what the step's op may emit
    /// (``FlowOperation/emit(_:to:)``): when the op emits pages to the group's input key, the
    /// group starts on its second page while the op goes on (``FlowElementStream``); otherwise the op
    /// runs to its end first and the group reads the bucket, as any serial step and group do.
    ///
    /// The op's failure ends the pair as it ends a serial step, once the group has run the
    /// elements it had; the group's failure stops the op (its next emit throws).
    func runFeeding(_ serial: SerialStep, _ group: FlowGroupPlan, groupID: FlowStepID) async -> Outcome? {
        let stream = FlowElementStream(key: group.inputKey, journal: journal, step: serial.id)
        async let serialEnd: Outcome? = {
            defer { stream.finish() }
            return await runSerial(serial.reference, location: serial.location, policy: serial.policy, id: serial.id, stream: stream)
        }()
        guard await stream.secondPageOrEnd() else {
            // Nothing emitted: the op ran to its end; the group reads the bucket.
            if let stop = await serialEnd { return stop }
            if Task.isCancelled { return .cancelled }
            return await runGroup(group, id: groupID)
        }
        let groupEnd = await runGroup(group, id: groupID, stream: stream)
        // Over: an op still emitting stops.
        stream.close()
        let opEnd = await serialEnd
        return groupEnd ?? opEnd
    }

    /// Runs a group over the elements of a Swift `AsyncSequence`, read a page at a time while
    /// the group runs (``FlowGroupElementSequence``), as ``runFeeding(_:_:groupID:)`` runs one over
    /// an op's pages. The sequence's failure fails the group once the elements it had are done.
    func runGroup(_ group: FlowGroupPlan, id: FlowStepID, reading elements: FlowGroupElementSequence) async -> Outcome? {
        let stream = FlowElementStream(key: group.inputKey)
        async let fed: Result<Void, any Error> = {
            defer { stream.finish() }
            return await elements.feed(stream)
        }()
        guard await stream.secondPageOrEnd() else {
            // Nothing came: the sequence was empty, or failed before its first element.
            if case .failure(let error) = await fed { return .failed(error) }
            run.log("[Group] no operation to run for group; the sequence of its elements yielded none")
            return .failed(FlowError.emptyGroupInput(key: "the sequence of its elements"))
        }
        let groupEnd = await runGroup(group, id: id, stream: stream)
        // Over: the sequence is no longer read (its task cancelled on the way out, should it
        // be waiting for an element).
        stream.close()
        if let groupEnd { return groupEnd }
        if case .failure(let error) = await fed, !(error is CancellationError) {
            run.log("[Group] the sequence of its elements failed: \(error)")
            return .failed(error)
        }
        return nil
    }
}
