#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// Unblocks ops that wait in `open` for a named pipe's writer, so that a test of them fails
/// instead of hanging.
final class PipeWriterWatchdog: Sendable {
    private let stopped = Atomic(false)

    /// Every `seconds` until ``stop()``, opens `path` for writing (without waiting) and closes it
    /// again, which ends a reader's wait. On a thread of its own: an op stuck in `open` holds a
    /// thread of Swift's cooperative pool, and two such ops hold all of them on a two-core
    /// machine, so a `Task` might never run. Does nothing while no reader waits.
    init(_ path: String, every seconds: UInt32) {
        Thread.detachNewThread { [self] in
            while true {
                sleep(seconds)
                if self.stopped.load(ordering: .acquiring) { return }
                let descriptor = open(path, O_WRONLY | O_NONBLOCK)
                if descriptor >= 0 { close(descriptor) }
            }
        }
    }

    func stop() {
        stopped.store(true, ordering: .releasing)
    }
}
