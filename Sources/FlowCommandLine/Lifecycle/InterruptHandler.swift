import Foundation
import UnixSignals

/// The first SIGINT or SIGTERM cancels the flow (the summary is still printed); a second one exits
/// at once. A run uses ``InterruptService`` in its `ServiceGroup`; a dry run, which has none, this.
struct InterruptHandler: Sendable {
    private let task: Task<Void, Never>

    init(onInterrupt: @escaping @Sendable () -> Void) {
        Self.ignoreUntilTrapped()
        task = Task {
            var seen = 0
            for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) {
                seen += 1
                Self.interrupted(times: seen, onInterrupt)
            }
        }
    }

    func cancel() {
        task.cancel()
    }

    /// Ignores SIGINT and SIGTERM until a signal sequence traps them: one in between must not end
    /// the run without its summary.
    static func ignoreUntilTrapped() {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
    }

    /// The `times`th interrupt: the first cancels, saying so; the next exits with status 130.
    static func interrupted(times: Int, _ cancel: @Sendable () -> Void) {
        guard times == 1 else { exit(130) }
        FileHandle.standardError.write(Data("\ninterrupted: cancelling the flow (again to quit now)\n".utf8))
        cancel()
    }
}
