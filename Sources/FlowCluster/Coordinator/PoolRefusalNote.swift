import Synchronization

/// Why the pool does not take this run, as the pool link last learnt it (a DISCONNECT that refuses
/// the run, or a CURVE handshake the pool's ZAP handler refused), for the words a run says when it
/// gives up on the pool: the link's thread writes it, the run reads it.
package final class PoolRefusalNote: Sendable {
    private let text = Mutex<String?>(nil)

    package init() {}

    /// The last refusal; `nil` once the pool welcomed the run again.
    package var value: String? { text.withLock { $0 } }

    func set(_ value: String?) {
        text.withLock { $0 = value }
    }
}
