import Flow
import FlowJournal
import Foundation
import Testing

/// A run journal of format 3: one row an element of about 60 bytes, given back to a resumed
/// run a page at a time in the order it was recorded (``FlowJournal/recordedPage(at:after:)``),
/// never read whole (issue 49).
@Suite struct JournalPagingTests {
    static let text = "flow: paging\nsteps:\n  - op: PrintOp\n"

    /// A folder of its own and a new journal in it.
    static func newJournal() throws -> (folder: URL, path: String, journal: RunJournal) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("flow-paging-\(UUID().uuidString)")
        let path = folder.appendingPathComponent("run.sqlite").path
        let journal = try RunJournal.create(at: path, runID: "r1", flowFile: "f.yaml", flowText: text,
                                            definition: try FlowFileLoader().load(text: text, file: "f.yaml"))
        return (folder, path, journal)
    }

    /// A no-op element's result as a cluster run records it: `SleepOp` on `local-1`, its index,
    /// and its tag (four hex digits, as ``FlowGroupTags`` makes them).
    static func element(_ index: Int, ok: Bool = true, at start: Date = Date(timeIntervalSince1970: 1_790_000_000.123456)) -> FlowJournalRecord {
        var result = FlowTaskResult(operationName: "SleepOp", state: ok ? .successfully : .withError("element \(index) failed"),
                                    events: [], bucket: [:], startedAt: start.addingTimeInterval(Double(index) / 1000),
                                    finishedAt: start.addingTimeInterval(Double(index) / 1000 + 0.000_321), worker: "local-1", attempt: 1)
        result.groupIndex = index
        let tag = String(index % 65_536, radix: 16)
        return FlowJournalRecord(result: result, tag: String(repeating: "0", count: 4 - tag.count) + tag)
    }

    /// Every page is full but the last; the pages hold every result once, in the order they were
    /// recorded (not by index), each as it was: its tag, worker, times and state.
    @Test func aResumedGroupIsGivenBackAPageAtATimeInTheOrderItWasRecorded() async throws {
        let (folder, path, journal) = try Self.newJournal()
        defer { try? FileManager.default.removeItem(at: folder) }
        let group = FlowStepID(path: "1")
        // Recorded out of index order, as elements finish; a second step's rows between them.
        let order = (0..<10_000).map { ($0 * 7_919) % 10_000 }
        for (position, index) in order.enumerated() {
            journal.accepted(Self.element(index, ok: index % 1_000 != 5), at: group)
            if position % 2_500 == 0 { journal.accepted(Self.element(position), at: FlowStepID(path: "2")) }
        }
        try await journal.finish(.interrupted, exitCode: 130)

        let (resumed, _) = try RunJournal.resume(at: path, retryFailed: false)
        #expect(resumed.replayedCount == 10_004)
        var pages: [[FlowJournalRecord]] = []
        var position: Int? = 0
        while let after = position {
            let page = resumed.recordedPage(at: group, after: after)
            pages.append(page.records)
            position = page.next
        }
        #expect(pages.map(\.count) == [4_096, 4_096, 1_808])
        let records = pages.flatMap { $0 }
        #expect(records.map { $0.result.groupIndex ?? -1 } == order)
        for record in records.prefix(50) {
            let index = try #require(record.result.groupIndex)
            let expected = Self.element(index, ok: index % 1_000 != 5)
            #expect(record.tag == expected.tag)
            #expect(record.result.worker == "local-1")
            // Kept to the microsecond: the start whole, the finish as how long it ran.
            #expect(abs(record.result.startedAt.timeIntervalSince(expected.result.startedAt)) < 0.000_001_5)
            #expect(abs(record.result.finishedAt.timeIntervalSince(expected.result.finishedAt)) < 0.000_001_5)
            #expect(record.result.state.isSuccess == expected.result.state.isSuccess)
        }
        #expect(records.filter { !$0.result.state.isSuccess }.count == 10)
        #expect(resumed.recordedResults(at: FlowStepID(path: "2")).map { $0.result.groupIndex } == [0, 2_500, 5_000, 7_500])
        #expect(resumed.recordedPage(at: FlowStepID(path: "3"), after: 0).records.isEmpty)
        try await resumed.finish(.succeeded, exitCode: 0)
    }

    /// `--retry-failed` deletes the failed rows it runs again: the retried element's new result is
    /// then its only row, and a later resume (without the flag) gives back that one, not the failure.
    @Test func aResumeThatRunsFailuresAgainKeepsOneRowAnElement() async throws {
        let (folder, path, journal) = try Self.newJournal()
        defer { try? FileManager.default.removeItem(at: folder) }
        let group = FlowStepID(path: "1")
        for index in 0..<6 { journal.accepted(Self.element(index, ok: index != 2 && index != 4), at: group) }
        try await journal.finish(.failed, exitCode: 1)
        #expect(try RunJournal.read(at: path).done == 6)

        let (retrying, _) = try RunJournal.resume(at: path, retryFailed: true)
        #expect(retrying.recordedResults(at: group).map { $0.result.groupIndex } == [0, 1, 3, 5])
        retrying.accepted(Self.element(2), at: group)
        try await retrying.finish(.interrupted, exitCode: 130)
        #expect(try RunJournal.read(at: path).done == 5, "element 4 runs again on the next resume")

        let (again, _) = try RunJournal.resume(at: path, retryFailed: false)
        let given = again.recordedResults(at: group)
        #expect(given.map { $0.result.groupIndex } == [0, 1, 3, 5, 2])
        #expect(given.allSatisfy { $0.result.state.isSuccess })
        try await again.finish(.succeeded, exitCode: 0)
    }

    /// The journal grows by at most about 64 bytes a no-op element (issue 49; format 2 wrote
    /// about 100): 100,000 elements in at most 6.4 MB, the WAL folded in.
    @Test func aNoOpElementCostsTheJournalAtMost64Bytes() async throws {
        let (folder, path, journal) = try Self.newJournal()
        defer { try? FileManager.default.removeItem(at: folder) }
        let count = 100_000
        for index in 0..<count { journal.accepted(Self.element(index), at: FlowStepID(path: "0")) }
        try await journal.finish(.succeeded, exitCode: 0)
        // Closed: the WAL is checkpointed into the file and removed.
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        let perElement = Double(size + wal) / Double(count)
        #expect(perElement <= 64, "\(perElement) bytes an element")
        #expect(try RunJournal.read(at: path).done == count)
    }
}

/// `verify`'s objects on disk (``LatestByKey``): the latest value of each key, in the order the
/// keys were first added, across the batches it writes in.
@Suite struct LatestByKeyTests {
    @Test func eachKeyKeepsItsLatestValueInTheFirstPlaceItWasAdded() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("flow-latest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var latest: LatestByKey? = try LatestByKey(folder: folder.path)
        // 10,000 keys, more than two batches; every tenth added again later with a new value.
        for index in 0..<10_000 { try latest?.add("v\(index)", forKey: "k\(index)") }
        for index in stride(from: 0, to: 10_000, by: 10).reversed() { try latest?.add("w\(index)", forKey: "k\(index)") }
        #expect(try latest?.count() == 10_000)
        var values: [String] = []
        try latest?.forEach { values.append($0) }
        #expect(values == (0..<10_000).map { $0 % 10 == 0 ? "w\($0)" : "v\($0)" })
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).count == 1)
        latest = nil
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty, "its file goes with it")
    }
}
