import Synchronization

/// Where a running op's progress goes: on a worker, its group's bytes budget (`limit:
/// {bytesPerSecond: …}`), which may hold the op back, and the coordinator's count of bytes sent.
///
/// The worker that runs a task of a group with a budget binds one for that task
/// (``FlowProgress/sink``); everywhere else there is none, and reporting costs one task-local read.
package protocol FlowProgressSink: Sendable {
    /// Counts `bytes` more bytes sent, and returns once the budget allows them to go.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled while it waits.
    func sent(bytes: Int) async throws

    /// Counts one request to the op's target beyond the one its start counts (a part of a
    /// multipart upload), and returns once the group's requests budget allows it.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled while it waits.
    func requested() async throws
}

extension FlowProgressSink {
    /// A sink that holds no requests budget lets every request go at once.
    package func requested() async throws {}
}

/// The progress sink of the task that runs now, bound by the worker around a task's op.
package enum FlowProgress {
    /// The calling task's sink, `nil` where nothing counts or limits bytes.
    @TaskLocal package static var sink: (any FlowProgressSink)?
    /// Why the calling task may be cancelled, bound by a worker around each task's op.
    @TaskLocal package static var cancellation: FlowCancellationCause?
}

/// Why a worker cancels a task's op, told before it cancels: a coordinator that went silent (killed,
/// or cut off) is not a user who cancelled the run, and an op that leaves work on a store for a
/// later try (a multipart upload) keeps it for `resume` then.
package final class FlowCancellationCause: Sendable {
    private let lost = Mutex(false)

    package init() {}

    /// The worker lost its coordinator: the run did not end, it was interrupted.
    package func coordinatorLost() {
        lost.withLock { $0 = true }
    }

    /// Whether the op is cancelled because its coordinator went silent.
    package var isCoordinatorLost: Bool { lost.withLock { $0 } }
}

extension FlowOperation {
    /// Says that the op is about to send `bytes` more bytes, and waits while its group's
    /// `bytesPerSecond` budget holds them back.
    ///
    /// Call it from ``FlowAsyncOperation/run()`` (or a task it awaits) before each chunk the op
    /// sends, a chunk of 64 KiB to 1 MiB: on a cluster the group's `limit: {bytesPerSecond: …}`
    /// then holds across all workers together, and `--metrics` and `status` count the bytes. Where
    /// no budget applies (no limit, or a run in one process), it returns at once.
    ///
    /// - Parameter bytes: bytes the op is about to send; 0 or less returns at once.
    /// - Throws: `CancellationError` when the op is cancelled while it waits.
    public func reportProgress(bytesSent bytes: Int) async throws {
        guard bytes > 0, let sink = FlowProgress.sink else { return }
        try await sink.sent(bytes: bytes)
    }

    /// Says that the op is about to make one more request to its target, beyond the one its start
    /// counts, and waits while its group's `requestsPerSecond` budget holds it back.
    ///
    /// A group's `limit: {requestsPerSecond: …}` counts each op's start (the coordinator holds
    /// those) and every request its ops report here, across all workers together. Call it before
    /// each further request an op makes to the same target: the stock `UploadFileOp` calls it before
    /// each part of a multipart upload (tries again included). Where no budget applies (no limit, a
    /// run in one process, or a coordinator or worker that predates it), it returns at once.
    ///
    /// - Throws: `CancellationError` when the op is cancelled while it waits.
    public func reportRequest() async throws {
        guard let sink = FlowProgress.sink else { return }
        try await sink.requested()
    }
}
