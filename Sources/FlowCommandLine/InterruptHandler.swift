import Foundation
import UnixSignals

/// The first SIGINT or SIGTERM cancels the flow (the summary is still printed); a second one exits
/// at once.
struct InterruptHandler: Sendable {
    private let task: Task<Void, Never>

    init(onInterrupt: @escaping @Sendable () -> Void) {
        // Ignored from now on, before the task below traps them: one meanwhile must not kill the
        // run without its summary.
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        task = Task {
            var seen = 0
            for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) {
                seen += 1
                guard seen == 1 else { exit(130) }
                FileHandle.standardError.write(Data("\ninterrupted: cancelling the flow (again to quit now)\n".utf8))
                onInterrupt()
            }
        }
    }

    func cancel() {
        task.cancel()
    }
}
