import FlowWire

extension WorkerStateMachine {
    /// Bytes the ops of this registration sent (§15): one PROGRESS, while registered. Entries of a
    /// task the coordinator no longer has on this worker are its to ignore.
    mutating func report(_ progress: [WireProgress], now: Instant) -> [Action] {
        guard isConnected, heardSinceConnect, !isStopped, !progress.isEmpty else { return [] }
        lastSent = now
        return [.send(.progress(progress))]
    }

    /// What the ops of this registration saved to continue from (§7.9): one CHECKPOINT, while
    /// registered. A task the coordinator no longer has on this worker is its to ignore.
    mutating func report(_ checkpoints: [WireCheckpoint], now: Instant) -> [Action] {
        guard isConnected, heardSinceConnect, !isStopped, !checkpoints.isEmpty else { return [] }
        lastSent = now
        return [.send(.checkpoint(checkpoints))]
    }
}
