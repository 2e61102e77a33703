import Dispatch
import Foundation

/// The first SIGINT or SIGTERM cancels the flow (the summary is still printed); a second one exits
/// at once.
final class InterruptHandler: @unchecked Sendable {
    private var sources: [any DispatchSourceSignal] = []
    private let lock = NSLock()
    private var count = 0

    init(onInterrupt: @escaping @Sendable () -> Void) {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { [self] in
                let seen = lock.withLock {
                    count += 1
                    return count
                }
                if seen == 1 {
                    FileHandle.standardError.write(Data("\ninterrupted: cancelling the flow (again to quit now)\n".utf8))
                    onInterrupt()
                } else {
                    exit(130)
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}
