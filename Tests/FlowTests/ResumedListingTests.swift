import Foundation
import Synchronization
import Testing
@testable import Flow

/// A listing that gives each page with its position (``FlowOperation/emit(_:to:from:)``) is not
/// listed again from the start by a resumed run (issue 49): the journal keeps the position of the
/// last page before which every element succeeded, the resumed op goes on from it, and the group
/// runs exactly what the first life left undone.
@Suite struct ResumedListingTests {
    /// A journal in memory; the next life's reads what an earlier one's accepted and checkpointed.
    final class Journal: FlowJournal, @unchecked Sendable {
        private let lock = NSLock()
        private var results: [String: [FlowJournalRecord]] = [:]
        private var saved: [String: [Int: FlowValue]] = [:]
        private let earlierResults: [String: [FlowJournalRecord]]
        private let earlierCheckpoints: [String: [Int: FlowValue]]

        init(after earlier: Journal? = nil) {
            earlierResults = earlier?.allResults ?? [:]
            earlierCheckpoints = earlier?.checkpoints ?? [:]
        }

        /// Every result this life and the earlier ones accepted.
        var allResults: [String: [FlowJournalRecord]] {
            lock.withLock { earlierResults.merging(results) { $0 + $1 } }
        }
        /// The checkpoints, the latest of each element, this life's over the earlier ones'.
        var checkpoints: [String: [Int: FlowValue]] {
            lock.withLock { earlierCheckpoints.merging(saved) { $0.merging($1) { $1 } } }
        }
        /// The group elements this life ran to a result.
        func indices(at step: String) -> [Int] {
            lock.withLock { (results[step] ?? []).compactMap(\.result.groupIndex).sorted() }
        }

        func recordedResults(at step: FlowStepID) -> [FlowJournalRecord] { earlierResults[step.path] ?? [] }
        func groupStarted(at step: FlowStepID, total: Int) {}
        func accepted(_ record: FlowJournalRecord, at step: FlowStepID) {
            lock.withLock { results[step.path, default: []].append(record) }
        }
        func checkpointed(_ value: FlowValue, at step: FlowStepID, element index: Int) {
            lock.withLock { saved[step.path, default: [:]][index] = value }
        }
        func checkpoints(at step: FlowStepID) -> [Int: FlowValue] { earlierCheckpoints[step.path] ?? [:] }
    }

    /// Where each life's listing began.
    final class Starts: Sendable {
        let value = Mutex<[Int]>([])
    }

    /// `ListOp` lists `i0` … `i1999` in pages of 100, each with the index of its first element as
    /// its position, going on from ``FlowOperation/resumedPosition(for:)``; `starts` records
    /// where each life's listing began. `EchoOp` (``probeRegistry(_:sleepMilliseconds:)``) holds
    /// the elements from `holdFrom` on until the run is cancelled.
    static func flow(_ probe: ConcurrencyProbe, starts: Starts, holdFrom: Int?, journal: Journal) -> Flow {
        var registry = probeRegistry(probe) { item in
            guard let holdFrom, let index = Int(item.dropFirst()), index >= holdFrom else { return 0 }
            return 600_000
        }
        registry.register("ListOp") { _ in
            FlowClosureOperation(name: "ListOp") { op in
                var start = 0
                if case .integer(let resumed)? = op.resumedPosition(for: "items") { start = Int(resumed) }
                starts.value.withLock { $0.append(start) }
                for page in stride(from: start, to: 2_000, by: 100) {
                    try await op.emit((page..<page + 100).map { "i\($0)" }, to: "items", from: .integer(Int64(page)))
                }
            }
        }
        return Flow(definition: FlowDefinition(name: "listing", bucket: [:], steps: [
            .operation(FlowOperationStep(op: "ListOp")),
            .group(FlowGroupStep(op: "EchoOp", input: "items", output: "results", maxConcurrent: 4)),
        ]), registry: registry).setJournal(journal)
    }

    /// Runs `flow` until `count` of its group's elements are done, then cancels it, as a killed
    /// coordinator stops: what it had not recorded is gone.
    static func cancel(_ flow: Flow, once count: Int) async {
        let (done, signal) = AsyncStream<Void>.makeStream()
        _ = flow.setProgressHandler { event in
            if case .groupElementFinished(_, let finished, _, _) = event, finished == count { signal.yield() }
        }
        let running = Task { await flow.run() }
        var iterator = done.makeAsyncIterator()
        _ = await iterator.next()
        flow.cancel()
        await running.value
    }

    // Within a minute: the first life waits for its 1,050th result, which a broken mark could
    // hold back for ever.
    @Test(.timeLimit(.minutes(1)))
    func aResumedRunGoesOnListingFromTheLastPageBeforeWhichEveryElementSucceeded() async {
        // The first life: cancelled (as a killed coordinator stops) once elements 0 … 1049 are
        // done and 1050 … 1053 are running.
        let starts = Starts()
        let first = Journal()
        let firstProbe = ConcurrencyProbe()
        let cut = Self.flow(firstProbe, starts: starts, holdFrom: 1_050, journal: first)
        await Self.cancel(cut, once: 1_050)
        #expect(cut.isCancelled)
        #expect(first.indices(at: "1") == Array(0..<1_050), "the first life's results: \(first.indices(at: "1").count)")
        let checkpoint = FlowListingPositions.decode(first.checkpoints["0"]?[0])
        #expect(checkpoint?.index == 1_000 && checkpoint?.position == .integer(1_000),
                "the page of element 1,000 is the last before which all succeeded: \(String(describing: checkpoint))")

        // The second life lists from element 1,000 on and runs exactly what the first left undone.
        let second = Journal(after: first)
        let probe = ConcurrencyProbe()
        let resumed = Self.flow(probe, starts: starts, holdFrom: nil, journal: second)
        await resumed.run()
        #expect(resumed.isSuccess, "\(resumed.generateSummary().suffix(2_000))")
        #expect(starts.value.withLock { $0 } == [0, 1_000], "where each life's listing began")
        #expect(second.indices(at: "1") == Array(1_050..<2_000), "the second life ran \(second.indices(at: "1").count)")
        #expect(Set(probe.startedNames).count == 950 && !probe.startedNames.contains("i1049"))
        #expect((resumed.dataBucket["results"] as? [Any])?.compactMap { $0 as? String } == (0..<2_000).map { "out_i\($0)" },
                "every element's output, in order: the first life's from the journal")
    }

    @Test func theMarkStopsAtAFailedElementSoThatARetryFindsItAgain() async {
        // Element 250 fails: every later page's elements succeed, but the checkpoint stays at
        // the page of element 200, so that `--retry-failed` finds element 250 in the listing.
        let journal = Journal()
        var registry = probeRegistry(ConcurrencyProbe()) { _ in 0 }
        registry.register("ListOp") { _ in
            FlowClosureOperation(name: "ListOp") { op in
                for page in stride(from: 0, to: 1_000, by: 100) {
                    let items: [Any] = (page..<page + 100).map { $0 == 250 ? "fail250" : "i\($0)" }
                    try await op.emit(items, to: "items", from: .integer(Int64(page)))
                }
            }
        }
        let flow = Flow(definition: FlowDefinition(name: "listing", bucket: [:], steps: [
            .operation(FlowOperationStep(op: "ListOp")),
            .group(FlowGroupStep(op: "EchoOp", input: "items", output: "results", maxConcurrent: 4, allowFailure: true)),
        ]), registry: registry).setJournal(journal)
        await flow.run()
        #expect(flow.isSuccess)
        #expect(FlowListingPositions.decode(journal.checkpoints["0"]?[0])?.index == 200)
    }

    /// A group reading a file (`input: {file:}`), cut at element 1,050 of 2,500 and resumed: the
    /// file is read on from the page of element 1,000 (its byte and line), for plain lines, a CSV
    /// file with a header, and a gzipped one; and from its start when it changed in between. Cut
    /// in its first page (at 500), a CSV file is read on after its header, which is no row.
    @Test(.timeLimit(.minutes(1)), arguments: ["lines", "csv", "gzip", "changed", "csv-first-page"])
    func aResumedGroupReadsItsFileOnFromTheCheckpointsPage(_ kind: String) async throws {
        let cutAt = kind == "csv-first-page" ? 500 : 1_050
        let isCSV = kind.hasPrefix("csv")
        var path = try GroupInputFileTests.inputFile(lines: 2_500, named: isCSV ? "items.csv" : "items.txt")
        if isCSV {
            let rows = (0..<2_500).map { "i\($0),x" }
            try (["item,other"] + rows).joined(separator: "\n").appending("\n").write(toFile: path, atomically: true, encoding: .utf8)
        }
        if kind == "gzip" {
            let gzip = Process()
            gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
            gzip.arguments = ["-f", path]
            try gzip.run()
            gzip.waitUntilExit()
            path += ".gz"
        }
        func flow(_ probe: ConcurrencyProbe, holdFrom: Int?, journal: Journal, events: GroupInputFileTests.Events) -> Flow {
            let holds: @Sendable (String) -> Bool = { item in
                guard let holdFrom, let index = Int(item.dropFirst()) else { return false }
                return index >= holdFrom
            }
            var registry = probeRegistry(probe) { holds($0) ? 600_000 : 0 }
            // A CSV row is a map: `RowOp` echoes its `item`.
            registry.register("RowOp", primaryInputParamKey: "item", primaryOutputParamKey: "result") { _ in
                FlowClosureOperation(name: "RowOp", primaryInputParamKey: "item", primaryOutputParamKey: "result") { op in
                    let row: [String: Any] = try op.value("item")
                    let item = row["item"] as? String ?? "?"
                    probe.enter(item)
                    defer { probe.leave() }
                    if holds(item) { try await Task.sleep(for: .seconds(600)) }
                    op.set("result", "out_" + item)
                }
            }
            let step = FlowGroupStep(op: isCSV ? "RowOp" : "EchoOp", input: "", output: "results", maxConcurrent: 4,
                                     inputFile: FlowGroupInputFile(path: path, format: nil))
            return Flow(definition: FlowDefinition(name: "from-file", bucket: [:], steps: [.group(step)]), registry: registry)
                .setJournal(journal).setProgressHandler { events.record($0) }
        }
        let first = Journal()
        await Self.cancel(flow(ConcurrencyProbe(), holdFrom: cutAt, journal: first, events: GroupInputFileTests.Events()), once: cutAt)
        #expect(FlowListingPositions.decode(first.checkpoints["0"]?[FlowFileListing.checkpointElement])?.index == cutAt / 1_000 * 1_000)

        if kind == "changed" {
            // Another version of the file: its checkpoint is not taken.
            try (0..<2_500).map { "i\($0)" }.joined(separator: "\n").appending("\n\n").write(toFile: path, atomically: true, encoding: .utf8)
        }
        let second = Journal(after: first)
        let probe = ConcurrencyProbe()
        let events = GroupInputFileTests.Events()
        let resumed = flow(probe, holdFrom: nil, journal: second, events: events)
        await resumed.run()
        #expect(resumed.isSuccess, "\(resumed.generateSummary().suffix(2_000))")
        #expect(second.indices(at: "0") == Array(cutAt..<2_500), "the second life ran \(second.indices(at: "0").count)")
        #expect(!probe.startedNames.contains("i\(cutAt - 1)"))
        let listed = events.all.filter { $0.hasPrefix("listed") }
        // Read on from element 1,000: the first page read ends at 2,000; from the start, at 1,000.
        #expect(listed.first == (cutAt < 1_000 || kind == "changed" ? "listed 1000" : "listed 2000"), "\(listed)")
        #expect((resumed.dataBucket["results"] as? [Any])?.compactMap { $0 as? String } == (0..<2_500).map { "out_i\($0)" })
    }

    /// The mark over results that come out of order (as they do from many workers), across
    /// the 64-element words its bits are kept in: the checkpoint follows the first element not
    /// yet succeeded, page by page, and stops for good at a failure.
    @Test func theMarkFollowsTheFirstElementNotYetSucceededWhateverTheOrder() async throws {
        let journal = Journal()
        let step = FlowStepID(path: "0")
        let stream = FlowElementStream(key: "items", journal: journal, step: step)
        for page in stride(from: 0, to: 1_000, by: 100) {
            try await stream.emit((page..<page + 100).map { $0 }, from: .integer(Int64(page)))
            _ = stream.take()
        }
        let mark = FlowSuccessMark(stream: stream)
        func checkpoint() -> Int? { FlowListingPositions.decode(journal.checkpoints["0"]?[0])?.index }
        // 0 … 449 in blocks of 150, each block backwards: the mark moves only at a block's end.
        for block in stride(from: 0, to: 450, by: 150) {
            for index in (block..<block + 150).reversed() { mark.succeeded(index) }
            #expect(checkpoint() == (block + 150) / 100 * 100, "after \(block + 150) elements")
        }
        // 451 … 599 first, then 450: the mark jumps to 600.
        for index in 451..<600 { mark.succeeded(index) }
        #expect(checkpoint() == 400, "450 has not succeeded")
        mark.succeeded(450)
        #expect(checkpoint() == 600)
        // 750 fails before 600 … 749 are done: the mark goes as far as 750 and no further,
        // though everything else succeeds.
        mark.failed(750)
        for index in (600..<1_000).reversed() where index != 750 { mark.succeeded(index) }
        #expect(checkpoint() == 700)
    }

    /// The positions kept: the last page at or before the mark, saved once per page, and asked
    /// for again at the next page's first element.
    @Test func thePositionsKeepTheLastPageAtOrBeforeTheMark() {
        var positions = FlowListingPositions()
        positions.emitted(start: 0, position: "a")
        positions.emitted(start: 10, position: "b")
        var step = positions.reached(0, end: 20)
        #expect(FlowListingPositions.decode(step.save)?.position == "a" && step.next == 10)
        step = positions.reached(5, end: 20)
        #expect(step.save == nil && step.next == 10, "the same page is not saved twice")
        step = positions.reached(15, end: 20)
        #expect(FlowListingPositions.decode(step.save)?.index == 10 && step.next == 20)
        positions.emitted(start: 20, position: "c")
        step = positions.reached(20, end: 30)
        #expect(FlowListingPositions.decode(step.save)?.position == "c" && step.next == 30)
        #expect(FlowListingPositions.decode(.map(["listingIndex": -1, "listingPosition": "x"])) == nil)
        #expect(FlowListingPositions.decode("not one") == nil)
    }
}
