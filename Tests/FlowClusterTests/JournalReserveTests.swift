@testable import FlowJournal
import FlowTestSupport
import Foundation
import Testing

/// The room a journal holds for recording its run's end, and how a write failure tells the room
/// left.
@Suite struct JournalReserveTests {
    @Test func theReserveIsAllocatedAndReleasedOnce() throws {
        let folder = try TemporaryDirectory()
        let journal = folder.file("run.sqlite").path
        let path = JournalReserve.path(forJournal: journal)
        // An earlier life's leftover is made again, not grown.
        FileManager.default.createFile(atPath: path, contents: Data(repeating: 1, count: 3 * JournalReserve.size))
        let reserve = try #require(JournalReserve(journal: journal))
        var stats = stat()
        #expect(stat(path, &stats) == 0)
        #expect(stats.st_size == off_t(JournalReserve.size))
        // Blocks on the disk, not a sparse file: deleting it gives the room back.
        #expect(Int(stats.st_blocks) * 512 >= JournalReserve.size, "\(stats.st_blocks) blocks")
        reserve.release()
        #expect(!FileManager.default.fileExists(atPath: path))
        // Once: a file made there since is not the reserve's.
        FileManager.default.createFile(atPath: path, contents: Data())
        reserve.release()
        #expect(FileManager.default.fileExists(atPath: path))
    }

    @Test func aFolderThatCannotHoldItGivesNoReserve() {
        #expect(JournalReserve(journal: "/nonexistent-folder-of-flow/run.sqlite") == nil)
    }

    @Test func freeSpaceIsToldInUnitsAReaderTakesIn() throws {
        #expect(RunJournalWriteFailure.describe(bytes: 0) == "0 bytes")
        #expect(RunJournalWriteFailure.describe(bytes: 1023) == "1023 bytes")
        #expect(RunJournalWriteFailure.describe(bytes: 4096) == "4.0 KiB")
        #expect(RunJournalWriteFailure.describe(bytes: 3 * 1024 * 1024 / 2) == "1.5 MiB")
        #expect(RunJournalWriteFailure.describe(bytes: 5 << 40) == "5.0 TiB")
        let folder = try TemporaryDirectory()
        #expect(RunJournalWriteFailure.freeBytes(at: folder.path) != nil)
        #expect(RunJournalWriteFailure.freeBytes(at: "/nonexistent-folder-of-flow") == nil)
        #expect(RunJournalWriteFailure.folder(of: "run.sqlite") == ".")
        #expect(RunJournalWriteFailure.folder(of: "/a/b/run.sqlite") == "/a/b")
    }
}
