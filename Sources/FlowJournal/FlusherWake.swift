import Foundation
import Synchronization

/// What wakes a journal's flushing thread, which otherwise sleeps: something to write (its
/// first result after a batch), a transaction's worth of results, the run's end.
// `@unchecked`: `pending`, `chunk` and `closed` are guarded by `condition`, `told` is atomic.
final class FlusherWake: @unchecked Sendable {
    private let condition = NSCondition()
    private var pending = false
    private var chunk = false
    private var closed = false
    /// Whether the thread has been told of what waits since its last batch: the engine's thread
    /// takes the condition's lock once a batch, not once a result.
    private let told = Atomic<Bool>(false)

    /// Something waits to be written: wakes the thread if nobody told it since its last batch.
    func somethingWaits() {
        guard !told.exchange(true, ordering: .acquiringAndReleasing) else { return }
        condition.lock()
        pending = true
        condition.signal()
        condition.unlock()
    }

    /// A transaction's worth of results waits: to be written now.
    func chunkWaits() {
        told.store(true, ordering: .releasing)
        condition.lock()
        pending = true
        chunk = true
        condition.signal()
        condition.unlock()
    }

    /// The run has ended: the thread writes what is left and the end.
    func close() {
        condition.lock()
        closed = true
        condition.signal()
        condition.unlock()
    }

    /// On the flushing thread: sleeps until something waits, then until `interval` has passed
    /// or a chunk waits; returns whether the journal is closing (then nothing more is batched).
    func waitForWork(within interval: Duration) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !pending, !closed { condition.wait() }
        if !closed, !chunk {
            let deadline = Date(timeIntervalSinceNow: Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18)
            while !chunk, !closed, condition.wait(until: deadline) {}
        }
        // Reset before the batch is taken from the buffer: what is added after that tells again.
        pending = false
        chunk = false
        told.store(false, ordering: .releasing)
        return closed
    }
}
