import Foundation
import Synchronization
import Testing
@testable import Flow

/// A journal in memory: keeps what the engine accepted and how far it let elements start, and
/// refuses to let them start past `allowedChunks` chunks (a run stopped half way); a second
/// journal made from the first gives its records back, as a resumed run's does.
private final class MemoryJournal: FlowJournal, Sendable {
    private struct State {
        var accepted: [String: [FlowJournalRecord]] = [:]
        var startedThrough: [String: Int] = [:]
        var chunksLeft: Int
        var grantedThrough = -1
        var totals: [Int] = []
    }

    private let recorded: [String: [FlowJournalRecord]]
    private let state: Mutex<State>

    init(allowedChunks: Int = .max, recorded: [String: [FlowJournalRecord]] = [:]) {
        self.recorded = recorded
        state = Mutex(State(chunksLeft: allowedChunks))
    }

    /// A journal of the same run's next life.
    func resumed() -> MemoryJournal { MemoryJournal(recorded: state.withLock { $0.accepted }) }

    var acceptedCount: Int { state.withLock { $0.accepted.values.reduce(0) { $0 + $1.count } } }
    /// The totals the group told as its file's pages were read.
    var totals: [Int] { state.withLock { $0.totals } }

    func recordedResults(at step: FlowStepID) -> [FlowJournalRecord] { recorded[step.path] ?? [] }
    func groupStarted(at step: FlowStepID, total: Int) { state.withLock { $0.totals.append(total) } }
    func accepted(_ record: FlowJournalRecord, at step: FlowStepID) {
        state.withLock { $0.accepted[step.path, default: []].append(record) }
    }

    /// Refuses once `allowedChunks` were granted and an element was accepted: refused before
    /// any finished (the feed reads ahead; under ThreadSanitizer it asked for the third chunk
    /// before the first element was done), the stopped run would hold nothing to resume from.
    func mayStart(at step: FlowStepID, through index: Int) -> Bool {
        state.withLock { state in
            let accepted = state.accepted.values.contains { !$0.isEmpty }
            guard state.chunksLeft > 0 || !accepted else { return false }
            state.chunksLeft -= 1
            state.grantedThrough = max(state.grantedThrough, index)
            state.startedThrough[step.path] = index
            return true
        }
    }

    /// The last element index any chunk granted so far reaches.
    var grantedThrough: Int { state.withLock { $0.grantedThrough } }
}

/// A group reads its elements from a file a page at a time (`input: {file:}`): it starts on the
/// first page, runs every element of a file of several pages in every drive, writes its outputs
/// to a file when asked, fails naming the line of a record it cannot read, and resumes from a
/// journal without running finished elements again.
@Suite struct GroupInputFileTests {
    /// `count` lines `i0`, `i1`, … in a new file; `bad` replaces that line (1-based) with text
    /// that is not JSON.
    static func inputFile(lines count: Int, named name: String = "items.txt", transform: (Int) -> String = { "i\($0)" }) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("flow-input-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent(name).path
        try (0..<count).map(transform).joined(separator: "\n").appending("\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func fileFlow(_ path: String, registry: FlowOperationRegistry, maxConcurrent: Int, output: String = "results",
                         outputFile: String? = nil, format: FlowInputFormat? = nil, maxFailures: FlowFailureBudget? = nil) -> Flow {
        Flow(definition: FlowDefinition(name: "from-file", bucket: [:], steps: [
            .group(FlowGroupStep(op: "EchoOp", input: "", output: output, maxConcurrent: maxConcurrent, maxFailures: maxFailures,
                                 inputFile: FlowGroupInputFile(path: path, format: format), outputFile: outputFile)),
        ]), registry: registry)
    }

    /// The group's progress events, as text.
    final class Events: Sendable {
        private let events = Mutex<[String]>([])
        func record(_ event: FlowProgressEvent) {
            let text: String? = switch event {
            case .groupStarted(_, let total, _): "started \(total.map(String.init) ?? "?")"
            case .groupListed(_, let listed, let complete): "listed \(listed)\(complete ? " complete" : "")"
            case .groupFinished(_, let done, _, let total): "finished \(done)/\(total.map(String.init) ?? "?")"
            default: nil
            }
            if let text { events.withLock { $0.append(text) } }
        }
        var all: [String] { events.withLock { $0 } }
    }

    @Test(arguments: [1, 4, 0])
    func aGroupRunsEveryElementOfAFileOfSeveralPagesInInputOrder(maxConcurrent: Int) async throws {
        // 0: the batched drive, 4 at once.
        let path = try Self.inputFile(lines: 2_500)
        let probe = ConcurrencyProbe()
        let registry = probeRegistry(probe) { _ in 0 }
        let events = Events()
        let flow = Self.fileFlow(path, registry: registry, maxConcurrent: maxConcurrent == 0 ? 4 : maxConcurrent)
            .setProgressHandler { events.record($0) }
        if maxConcurrent == 0 { _ = flow.setExecutor(LocalBatchExecutor(registry: registry)) }
        await flow.run()
        #expect(flow.isSuccess, "\(flow.generateSummary())")
        let results = flow.dataBucket["results"] as? [Any]
        #expect(results?.count == 2_500)
        #expect(results?.compactMap { $0 as? String } == (0..<2_500).map { "out_i\($0)" })
        #expect(Set(probe.startedNames).count == 2_500)
        // The count is not known at the start, comes page by page, and is whole at the end.
        #expect(events.all.first == "started ?", "\(events.all)")
        #expect(events.all.contains("listed 1000") && events.all.contains("listed 2500 complete"), "\(events.all)")
        #expect(events.all.last == "finished 2500/2500", "\(events.all)")
    }

    @Test func outputsGoToAFileAsJSONLinesAndNoArrayIsKept() async throws {
        let path = try Self.inputFile(lines: 1_500)
        let outputPath = path + ".out.jsonl"
        let registry = probeRegistry(ConcurrencyProbe()) { _ in 0 }
        let flow = Self.fileFlow(path, registry: registry, maxConcurrent: 8, output: "", outputFile: outputPath)
        await flow.run()
        #expect(flow.isSuccess, "\(flow.generateSummary())")
        #expect(flow.dataBucket["results"] == nil)
        let lines = try String(contentsOfFile: outputPath, encoding: .utf8).split(separator: "\n")
        var outputs: [Int: String] = [:]
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            let index = try #require(object?["index"] as? Int)
            #expect(outputs[index] == nil, "index \(index) written twice")
            outputs[index] = object?["output"] as? String
        }
        #expect(outputs.count == 1_500)
        #expect(outputs.allSatisfy { $0.value == "out_i\($0.key)" })
    }

    @Test func aRecordThatCannotBeReadFailsTheGroupNamingItsFileAndLine() async throws {
        let path = try Self.inputFile(lines: 2_500, named: "items.jsonl") { $0 == 1_499 ? "{\"broken\": " : "\"i\($0)\"" }
        let probe = ConcurrencyProbe()
        let registry = probeRegistry(probe) { _ in 0 }
        let flow = Self.fileFlow(path, registry: registry, maxConcurrent: 4)
        await flow.run()
        #expect(!flow.isSuccess)
        let summary = flow.generateSummary()
        #expect(summary.contains("input file \(path), line 1500: not JSON"), "\(summary)")
        // The page with the bad record is not handed out; every element of the page before is.
        #expect(Set(probe.startedNames) == Set((0..<1_000).map { "i\($0)" }))
        #expect(flow.dataBucket["results"] == nil)
    }

    @Test func aPercentageBudgetCountsTheElementsKnownSoFar() async throws {
        // 15 failures among the elements 1,500 to 1,514: by then 2,000 are known.
        let path = try Self.inputFile(lines: 3_000) { (1_500..<1_515).contains($0) ? "fail\($0)" : "i\($0)" }
        let registry = probeRegistry(ConcurrencyProbe()) { _ in 0 }
        let within = Self.fileFlow(path, registry: registry, maxConcurrent: 1, maxFailures: .percent(1))
        await within.run()
        #expect(within.isSuccess, "15 failures of 2,000 known are within 1% (20)")
        let beyond = Self.fileFlow(path, registry: registry, maxConcurrent: 1, maxFailures: .percent(0.5))
        await beyond.run()
        #expect(!beyond.isSuccess, "15 failures of 2,000 known are beyond 0.5% (10)")
        #expect(beyond.generateSummary().contains("more than maxFailures: 0.5% allows (10)"))
    }

    @Test func aResumedGroupDoesNotRunWhatItsJournalHolds() async throws {
        let path = try Self.inputFile(lines: 2_500)
        let outputPath = path + ".out.jsonl"
        let first = ConcurrencyProbe()
        // Two chunks of 257 elements may start (more while none has finished); the next is refused and the run stops.
        let journal = MemoryJournal(allowedChunks: 2)
        let stopped = Self.fileFlow(path, registry: probeRegistry(first) { _ in 0 }, maxConcurrent: 4, output: "", outputFile: outputPath)
            .setJournal(journal)
        await stopped.run()
        #expect(stopped.isCancelled)
        let finished = journal.acceptedCount
        // At least one element finished before the refusal; none past the chunks granted started.
        #expect(finished > 0 && finished <= journal.grantedThrough + 1, "\(finished) of \(journal.grantedThrough + 1)")
        #expect(finished < 2_500, "the run stopped part way")

        let second = ConcurrencyProbe()
        let resumed = Self.fileFlow(path, registry: probeRegistry(second) { _ in 0 }, maxConcurrent: 4, output: "", outputFile: outputPath)
            .setJournal(journal.resumed())
        await resumed.run()
        #expect(resumed.isSuccess, "\(resumed.generateSummary())")
        #expect(second.startedNames.count == 2_500 - finished, "ran again what the journal held")
        #expect(Set(first.startedNames).union(second.startedNames).count == 2_500)
        // The output file is whole: the taken-back elements' outputs are written again.
        let lines = try String(contentsOfFile: outputPath, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2_500)
    }

    @Test func theJournalHearsTheCountGrowPageByPage() async throws {
        let path = try Self.inputFile(lines: 2_200)
        let journal = MemoryJournal()
        let flow = Self.fileFlow(path, registry: probeRegistry(ConcurrencyProbe()) { _ in 0 }, maxConcurrent: 4).setJournal(journal)
        await flow.run()
        #expect(flow.isSuccess)
        #expect(journal.totals.first == 1_000 && journal.totals.last == 2_200, "\(journal.totals)")
        #expect(journal.totals == journal.totals.sorted())
    }

    @Test func anEmptyOrMissingFileFailsTheGroupSayingWhich() async throws {
        let empty = try Self.inputFile(lines: 0)
        try "".write(toFile: empty, atomically: true, encoding: .utf8)
        let registry = probeRegistry(ConcurrencyProbe()) { _ in 0 }
        let flow = Self.fileFlow(empty, registry: registry, maxConcurrent: 2)
        await flow.run()
        #expect(!flow.isSuccess)
        #expect(flow.generateSummary().contains("input data: <file \(empty)> is not empty"))
        let missing = Self.fileFlow(empty + ".missing", registry: registry, maxConcurrent: 2)
        await missing.run()
        #expect(!missing.isSuccess)
        #expect(missing.generateSummary().contains("input file \(empty).missing: cannot open it: No such file or directory"))
    }
}

/// How a flow file says a group reads a file and writes its outputs to one.
@Suite struct GroupInputFileSyntaxTests {
    private func group(_ yaml: String) throws -> FlowGroupStep? {
        let definition = try FlowFileLoader().load(text: "flow: x\nsteps:\n  - group:\n" + yaml, file: "f.yaml")
        guard case .group(let group) = definition.steps.first else { return nil }
        return group
    }

    private func diagnostics(_ yaml: String) -> [String] {
        do {
            _ = try FlowFileLoader().load(text: "flow: x\nsteps:\n  - group:\n" + yaml, file: "f.yaml")
            return []
        } catch {
            return error.diagnostics.map(\.description)
        }
    }

    @Test func inputAndOutputFilesAreRead() throws {
        let step = try #require(try group("      op: A\n      input: {file: in.csv, format: csv, columns: [a, b]}\n      output: {file: out.jsonl}\n"))
        #expect(step.inputFile == FlowGroupInputFile(path: "in.csv", format: .csv(columns: ["a", "b"])))
        #expect(step.outputFile == "out.jsonl" && step.output.isEmpty && step.input.isEmpty)
        let inventory = try #require(try group("      op: A\n      input: {file: inv.csv, format: s3-inventory, columns: \"Bucket, Key, Size\"}\n"))
        #expect(inventory.inputFile?.format == .s3Inventory(columns: ["Bucket", "Key", "Size"]))
        #expect(inventory.output.isEmpty && inventory.outputFile == nil, "a group reading a file may leave output out")
        let guessed = try #require(try group("      op: A\n      input: {file: in.ndjson}\n      output: out\n"))
        #expect(guessed.inputFile?.format == .jsonLines && guessed.output == "out")
    }

    @Test func wrongShapesAreReportedWhereTheyAre() {
        #expect(diagnostics("      op: A\n      input: {path: x}\n") == [
            "f.yaml:5:14: input as a map reads a file: add 'file: <path of a JSON lines, lines or CSV file>'",
            "f.yaml:5:15: unknown key 'path' in input; expected one of 'file', 'format', 'columns'",
        ])
        #expect(diagnostics("      op: A\n      input: {file: x, format: xml}\n") == [
            "f.yaml:5:32: input.format must be one of lines, jsonl, csv, s3-inventory, found 'xml'",
        ])
        #expect(diagnostics("      op: A\n      input: {file: x, format: s3-inventory}\n") == [
            "f.yaml:5:32: format: s3-inventory needs columns: the inventory's manifest.json fileSchema, e.g. \"Bucket, Key, Size\"",
        ])
        #expect(diagnostics("      op: A\n      input: {file: x, format: lines, columns: [a]}\n") == [
            "f.yaml:5:39: columns is for format: csv or s3-inventory, not lines",
        ])
        #expect(diagnostics("      op: A\n      input: items\n      output: {name: x}\n") == [
            "f.yaml:6:15: output as a map writes a file: add 'file: <path of the JSON lines file to write>'",
            "f.yaml:6:16: unknown key 'name' in output; expected one of 'file'",
        ])
        #expect(diagnostics("      op: A\n      input: items\n") == [], "a group may leave output out: it collects nothing")
    }
}
