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
        let stream = FlowElementStream(key: group.inputKey)
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
}
