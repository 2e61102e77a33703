import Flow
import FlowWire
import Foundation

/// Keeps a run's SUBMITs within what a pool takes (§10, §14.2): a pool drops the connection of a
/// client that sends a frame over ``WireLimits/maximumInboundFrameSize``, and the client, saying
/// HELLO again and sending its tasks again, would do so for good. Instead a batch over the limit
/// goes as one SUBMIT per task, and a task whose own SUBMIT is over it is not sent: it fails at
/// once, permanently, saying how big it was and what to do.
enum SubmitSizeGuard {
    /// The SUBMIT frames to send for `tasks`, and the results of those refused as too large.
    static func frames(for tasks: [WireTask], limit: Int = WireLimits.maximumInboundFrameSize, now: Date = Date())
        -> (frames: [[Data]], refused: [WireResult]) {
        let encoded = WireCodec.encode(.submit(tasks))
        let size = encoded.reduce(0) { $0 + $1.count }
        guard size > limit else { return ([encoded], []) }
        guard tasks.count == 1, let task = tasks.first else {
            return tasks.reduce(into: ([], [])) { sum, task in
                let one = frames(for: [task], limit: limit, now: now)
                sum.frames += one.frames
                sum.refused += one.refused
            }
        }
        let refused = WireResult(taskID: task.taskID, attempt: task.attempt, finishState: .withError(tooLargeText(size: size, limit: limit)),
                                 startedAt: now, finishedAt: now, elementIndex: task.isGroupElement ? task.elementIndex : nil,
                                 isPermanent: true)
        return ([], [refused])
    }

    /// What a task too large for the pool fails with.
    static func tooLargeText(size: Int, limit: Int) -> String {
        "the task (its op's parameters and bucket) is \(size) bytes, more than the \(limit) bytes one task may carry to a pool; "
            + "keep large data in a file or a store and put its path or URL in the bucket instead, or run without --pool"
    }
}
