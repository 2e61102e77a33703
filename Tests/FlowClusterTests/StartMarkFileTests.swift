@testable import FlowJournal
import FlowTestSupport
import Foundation
import Testing

/// The journal's notes file: what is appended is read back, per step the highest index, and what a
/// crash can leave (a line cut short) or anything else that is not a note is skipped.
@Suite struct StartMarkFileTests {
    @Test func notesAreReadBackPerStepAtTheirHighest() throws {
        let folder = try TemporaryDirectory()
        let journal = folder.file("run.sqlite").path
        let steps = ["0", "1/group", "odd\tstep\nwith 100% of it"]
        do {
            let marks = try #require(StartMarkFile(journal: journal, truncating: true))
            #expect(marks.append(step: steps[0], through: 0))
            #expect(marks.append(step: steps[1], through: 255))
            #expect(marks.append(step: steps[1], through: 511))
            #expect(marks.append(step: steps[1], through: 300))
            #expect(marks.append(step: steps[2], through: 7))
        }
        #expect(StartMarkFile.read(journal: journal) == [steps[0]: 0, steps[1]: 511, steps[2]: 7])
    }

    @Test func aLineCutShortAndLinesThatAreNoNotesAreSkipped() throws {
        let folder = try TemporaryDirectory()
        let journal = folder.file("run.sqlite").path
        let text = "3\tkept\n" + "x\tnot a number\n" + "no tab here\n" + "-1\tnegative\n" + "9\tcut short"
        try Data(text.utf8).write(to: URL(fileURLWithPath: StartMarkFile.path(forJournal: journal)))
        #expect(StartMarkFile.read(journal: journal) == ["kept": 3])
    }

    @Test func noFileMeansNoNotesAndTruncatingStartsOver() throws {
        let folder = try TemporaryDirectory()
        let journal = folder.file("run.sqlite").path
        #expect(StartMarkFile.read(journal: journal).isEmpty)
        _ = try #require(StartMarkFile(journal: journal)).append(step: "0", through: 4)
        #expect(StartMarkFile.read(journal: journal) == ["0": 4])
        _ = try #require(StartMarkFile(journal: journal, truncating: true))
        #expect(StartMarkFile.read(journal: journal).isEmpty)
        StartMarkFile.remove(journal: journal)
        #expect(!FileManager.default.fileExists(atPath: StartMarkFile.path(forJournal: journal)))
    }
}
