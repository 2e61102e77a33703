import Flow
import FlowWire
import Foundation

/// Keeps a worker's RESULT frames within what a coordinator takes (§7.3, §10): a coordinator
/// drops the connection of a peer that sends a frame over ``WireLimits/maximumInboundFrameSize``,
/// so a 300 MB output made the worker "lost", the task was sent again, and after three such
/// losses it failed as a task that may crash its workers. Instead a batch over the limit goes as
/// one RESULT per task, and a task whose own RESULT is over it fails, permanently, saying how big
/// its result was and what to do.
enum ResultSizeGuard {
    /// The frames to send for `message`: its own, or for a RESULT batch over `limit`, one message
    /// per result, each failed in place when it alone is over `limit`.
    static func frames(for message: WireMessage, limit: Int = WireLimits.maximumInboundFrameSize) -> [[Data]] {
        let encoded = WireCodec.encode(message)
        let size = encoded.reduce(0) { $0 + $1.count }
        guard case .result(let results) = message, size > limit else { return [encoded] }
        if results.count > 1 { return results.flatMap { Self.frames(for: WireMessage.result([$0]), limit: limit) } }
        guard let result = results.first else { return [encoded] }
        let failed = WireResult(
            taskID: result.taskID, attempt: result.attempt,
            finishState: .withError(tooLargeText(size: size, limit: limit)), startedAt: result.startedAt, finishedAt: result.finishedAt,
            elementIndex: result.elementIndex, isPermanent: true)
        return [WireCodec.encode(.result([failed]))]
    }

    /// What a task whose result is too large fails with.
    static func tooLargeText(size: Int, limit: Int) -> String {
        "the op's result (its output, bucket changes and log lines) is \(size) bytes, more than the \(limit) bytes one result may "
            + "carry to the coordinator; write a large output to a file or a store and put its path or URL in the bucket instead"
    }
}
