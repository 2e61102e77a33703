import FlowWire
import Testing
@testable import FlowCluster

@Suite struct WorkerBacklogTests {
    private func task(_ id: UInt64) -> WireTask {
        WireTask(taskID: id, op: "EchoOp", groupElement: .integer(Int64(id)), elementIndex: Int(id))
    }

    @Test func tasksLeaveInTheOrderTheyCameThroughEveryCompaction() {
        var backlog: WorkerBacklog = []
        var next: UInt64 = 0
        var expected: UInt64 = 0
        // Pushes and pops interleaved so that the taken places pile up and are reclaimed many
        // times, with the backlog never empty in between.
        for round in 0..<500 {
            for _ in 0..<(round % 3 + 1) {
                backlog.append(task(next))
                next += 1
            }
            for _ in 0..<(round % 2 + 1) {
                guard let first = backlog.popFirst() else { break }
                #expect(first.taskID == expected)
                expected += 1
            }
            #expect(backlog.count == Int(next - expected))
            #expect(backlog.map(\.taskID) == Array(expected..<next))
        }
        while let first = backlog.popFirst() {
            #expect(first.taskID == expected)
            expected += 1
        }
        #expect(expected == next)
        #expect(backlog.isEmpty && backlog.count == 0)
        #expect(backlog.popFirst() == nil)
    }
}
