import Foundation
import Testing
@testable import Flow

/// A journal that keeps the first `allowed` calls of ``mayStart(at:through:)`` and refuses the
/// rest, as a journal on a full disk does; it records nothing.
private final class RefusingJournal: FlowJournal, @unchecked Sendable {
    private let lock = NSLock()
    private var allowed: Int
    private(set) var asked: [(step: String, through: Int)] = []

    init(allowed: Int) {
        self.allowed = allowed
    }

    func recordedResults(at step: FlowStepID) -> [FlowJournalRecord] { [] }
    func groupStarted(at step: FlowStepID, total: Int) {}
    func accepted(_ record: FlowJournalRecord, at step: FlowStepID) {}

    func mayStart(at step: FlowStepID, through index: Int) -> Bool {
        lock.withLock {
            asked.append((step.path, index))
            allowed -= 1
            return allowed >= 0
        }
    }
}

/// A journal that cannot keep how far elements may start stops the run: no element starts past
/// what it kept, and the flow ends cancelled (a resume goes on), never as a group that finished.
@Suite struct JournalRefusalTests {
    static let items = (0..<1_000).map { "i\($0)" }

    /// The items that ran, as indexes.
    static func ran(_ probe: ConcurrencyProbe) -> Set<Int> {
        Set(probe.startedNames.compactMap { Int($0.dropFirst()) })
    }

    @Test(arguments: [1, 4])
    func aGroupStopsWhereTheJournalRefused(maxConcurrent: Int) async {
        let probe = ConcurrencyProbe()
        let registry = probeRegistry(probe) { _ in 0 }
        let journal = RefusingJournal(allowed: 1)
        let flow = groupFlow(items: Self.items, registry: registry, maxConcurrent: maxConcurrent).setJournal(journal)
        await flow.run()
        // The first chunk was kept; the second was refused and none of it started.
        let kept = journal.asked.first?.through ?? -1
        #expect(journal.asked.count == 2, "\(journal.asked)")
        // Those the engine had taken may have been cancelled before they ran.
        #expect(!Self.ran(probe).isEmpty && Self.ran(probe).isSubset(of: 0...kept), "ran \(Self.ran(probe).count), through \(kept) kept")
        #expect(!flow.isSuccess && flow.isCancelled)
        #expect(flow.dataBucket["results"] == nil, "a group the journal stopped gave its output as if it had finished")
        #expect(flow.generateSummary().contains("[Flow] cancelled"))
    }

    @Test func aBatchedGroupStopsWhereTheJournalRefused() async {
        let probe = ConcurrencyProbe()
        let registry = probeRegistry(probe) { _ in 0 }
        let journal = RefusingJournal(allowed: 1)
        let flow = groupFlow(items: Self.items, registry: registry, maxConcurrent: 4)
            .setExecutor(LocalBatchExecutor(registry: registry)).setJournal(journal)
        await flow.run()
        let kept = journal.asked.first?.through ?? -1
        #expect(journal.asked.count == 2, "\(journal.asked)")
        #expect(!Self.ran(probe).isEmpty && Self.ran(probe).isSubset(of: 0...kept), "ran \(Self.ran(probe).count), through \(kept) kept")
        #expect(!flow.isSuccess && flow.isCancelled)
        #expect(flow.dataBucket["results"] == nil)
    }

    @Test func aSerialOpTheJournalRefusedDoesNotRun() async {
        let probe = ConcurrencyProbe()
        let registry = probeRegistry(probe)
        let journal = RefusingJournal(allowed: 1)
        let flow = Flow(definition: FlowDefinition(name: "serial", bucket: [:], steps: [
            .operation(FlowOperationStep(op: "PrintOp", parameters: ["message": "first-op-ran"])),
            .operation(FlowOperationStep(op: "PrintOp", parameters: ["message": "second-op-ran"])),
            .group(FlowGroupStep(op: "EchoOp", input: "items", output: "results")),
        ]), registry: registry).setDataBucket(dataBucket: ["items": ["a"]]).setJournal(journal)
        await flow.run()
        let summary = flow.generateSummary()
        #expect(summary.contains("first-op-ran") && !summary.contains("second-op-ran"), "\(summary)")
        #expect(probe.startedNames.isEmpty)
        #expect(journal.asked.map(\.step) == ["0", "1"])
        #expect(!flow.isSuccess && flow.isCancelled)
    }
}
