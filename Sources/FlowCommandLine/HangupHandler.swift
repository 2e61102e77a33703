import Dispatch
import Foundation

/// Calls its handler on every SIGHUP (re-reading a file, as daemons do), until cancelled.
final class HangupHandler: @unchecked Sendable {
    private let source: any DispatchSourceSignal

    init(onHangup: @escaping @Sendable () -> Void) {
        signal(SIGHUP, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        source.setEventHandler(handler: onHangup)
        source.resume()
    }

    func cancel() {
        source.cancel()
    }
}
