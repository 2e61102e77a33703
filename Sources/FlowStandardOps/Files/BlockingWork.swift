import Dispatch

/// Runs blocking work (file reads, hashing) on a Dispatch thread and awaits it, so an async op
/// never holds one of Swift concurrency's few cooperative threads while it waits on the disk.
enum BlockingWork {
    static func run<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Swift.Result { try work() })
            }
        }
    }
}
