import Flow
import FlowJournal
import Foundation
import Testing

/// A run journal keeps each element's latest checkpoint (``FlowJournal/checkpointed(_:at:element:)``)
/// and a resume hands them back (``FlowJournal/checkpoints(at:)``).
@Suite struct JournalCheckpointTests {
    @Test func theLatestCheckpointOfEachElementSurvivesToTheResume() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("flow-checkpoints-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("run.sqlite").path
        let text = "flow: checkpoints\nsteps:\n  - op: PrintOp\n"
        let journal = try RunJournal.create(at: path, runID: "r1", flowFile: "f.yaml", flowText: text,
                                            definition: try FlowFileLoader().load(text: text, file: "f.yaml"))
        let upload: FlowValue = .map(["uploadId": "u-1", "parts": .array([.map(["number": 1, "etag": "\"e1\""])])])
        journal.checkpointed("first", at: FlowStepID(path: "1"), element: 3)
        journal.checkpointed(upload, at: FlowStepID(path: "1"), element: 3)
        journal.checkpointed(.integer(7), at: FlowStepID(path: "2/0/1"), element: 0)
        #expect(journal.checkpoints(at: FlowStepID(path: "1")).isEmpty, "a new run has no earlier checkpoints")
        try await journal.finish(.interrupted, exitCode: 130)

        let (resumed, _) = try RunJournal.resume(at: path, retryFailed: false)
        #expect(resumed.checkpoints(at: FlowStepID(path: "1")) == [3: upload], "the latest replaces the earlier one")
        #expect(resumed.checkpoints(at: FlowStepID(path: "2/0/1")) == [0: .integer(7)])
        #expect(resumed.checkpoints(at: FlowStepID(path: "0")).isEmpty)
        try await resumed.finish(.succeeded, exitCode: 0)
    }

    /// A checkpoint nested deeper than the journal reads back (the wire's 64) is not kept: kept, it
    /// made `resume` unable to read the journal at all.
    @Test func aCheckpointTooDeepToReadBackIsNotKeptAndTheJournalResumes() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("flow-checkpoints-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("run.sqlite").path
        let text = "flow: checkpoints\nsteps:\n  - op: PrintOp\n"
        let journal = try RunJournal.create(at: path, runID: "r1", flowFile: "f.yaml", flowText: text,
                                            definition: try FlowFileLoader().load(text: text, file: "f.yaml"))
        var deep = FlowValue.integer(1)
        for _ in 0..<65 { deep = .array([deep]) }
        journal.checkpointed(.integer(1), at: FlowStepID(path: "1"), element: 0)
        journal.checkpointed(deep, at: FlowStepID(path: "1"), element: 1)
        try await journal.finish(.interrupted, exitCode: 130)

        let (resumed, _) = try RunJournal.resume(at: path, retryFailed: false)
        #expect(resumed.checkpoints(at: FlowStepID(path: "1")) == [0: .integer(1)])
        try await resumed.finish(.succeeded, exitCode: 0)
    }
}
