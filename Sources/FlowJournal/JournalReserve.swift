#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// Room held on the journal's disk for writing how the run ended: a file next to the journal
/// (`<journal>-reserve`), its blocks allocated when the journal opens, deleted when a write has
/// failed (a full disk) just before the run's end is written, and at the end in any case.
///
/// Without it, the disk that refused a batch of results also refused the few pages that say the
/// run was interrupted and with which exit code: the file stayed `running`, and only the dead
/// process id told `runs` and `resume` otherwise.
final class JournalReserve: Sendable {
    /// Enough for the run's last transaction (its row, the folded start notes) with room to spare:
    /// a handful of 4 KiB WAL frames.
    static let size = 256 * 1024

    private let path: String
    private let held = Mutex(true)

    /// The reserve file of the journal at `journal`.
    static func path(forJournal journal: String) -> String { journal + "-reserve" }

    /// Allocates the reserve of the journal at `journal` (made again if an earlier life of the run
    /// left one); `nil` when the disk has no room for it, or the file cannot be made: the journal
    /// then goes on without.
    init?(journal: String) {
        path = Self.path(forJournal: journal)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        // Allocated, not just sized: a sparse file would give nothing back.
        let allocated = posix_fallocate(descriptor, 0, off_t(Self.size)) == 0
        close(descriptor)
        guard allocated else {
            unlink(path)
            return nil
        }
    }

    /// Deletes the file, giving its room back; once.
    func release() {
        let wasHeld = held.withLock { held in
            defer { held = false }
            return held
        }
        if wasHeld { unlink(path) }
    }
}
