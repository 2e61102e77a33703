import Synchronization

/// Passes a coordinator's events on to a sink that may not exist yet: a coordinator started
/// before its flow is read (``ClusterRun/LocalStart``) keeps the events it has until a run takes
/// it, then hands them over in order.
final class ClusterEventRelay: Sendable {
    private struct State {
        var sink: (@Sendable (ClusterEvent) -> Void)?
        var pending: [ClusterEvent] = []
    }

    private let state = Mutex(State())

    /// Passes `event` to the sink, or keeps it until there is one.
    ///
    /// The sink runs under the relay's lock, so events arrive in order even while ``attach(_:)``
    /// hands over the kept ones; it must not call back into the relay.
    func deliver(_ event: ClusterEvent) {
        state.withLock { state in
            if let sink = state.sink {
                sink(event)
            } else {
                state.pending.append(event)
            }
        }
    }

    /// Sets the sink and passes it the events kept so far.
    func attach(_ sink: @escaping @Sendable (ClusterEvent) -> Void) {
        state.withLock { state in
            for event in state.pending { sink(event) }
            state.pending = []
            state.sink = sink
        }
    }
}
