import Foundation
import UnixSignals

/// Calls its handler on every SIGHUP (re-reading a file, as daemons do), until cancelled.
struct HangupHandler: Sendable {
    private let task: Task<Void, Never>

    init(onHangup: @escaping @Sendable () -> Void) {
        // Ignored from now on, before the task below traps it: a SIGHUP meanwhile must not end
        // the process (its default).
        signal(SIGHUP, SIG_IGN)
        task = Task {
            for await _ in await UnixSignalsSequence(trapping: .sighup) {
                onHangup()
            }
        }
    }

    func cancel() {
        task.cancel()
    }
}
