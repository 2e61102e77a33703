import FlowCluster
import Foundation

/// Progress and cluster events on stderr.
final class ProgressReporter: Sendable {
    let quiet: Bool

    init(quiet: Bool) {
        self.quiet = quiet
    }

    func report(_ event: ClusterEvent) {
        switch event {
        case .staleResult, .unknownPeer, .unexpectedMessage, .malformedMessage:
            // Diagnostics, printed even with --quiet: something odd reached the coordinator.
            FileHandle.standardError.write(Data("[cluster] \(event)\n".utf8))
        default:
            note(event.description)
        }
    }

    func note(_ text: String) {
        guard !quiet else { return }
        FileHandle.standardError.write(Data("[cluster] \(text)\n".utf8))
    }
}
