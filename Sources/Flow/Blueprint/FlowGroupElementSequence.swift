import Foundation

/// A group's elements as a Swift `AsyncSequence` yields them
/// (``FlowArrayGroupDispatcher/init(elements:outputKey:maxConcurrentOperationCount:allowFailure:)``):
/// handed to the group a page at a time as they come, never held whole, so a group can run over
/// a listing, a query or a file of any size while it is still being read.
struct FlowGroupElementSequence: Sendable {
    /// Elements handed over at a time at most.
    static let pageSize = 1_000
    /// A page is handed over once its first element has waited this long, when the next one
    /// comes: a slow sequence's elements start soon without a page each for a fast one.
    static let pageDelay = Duration.milliseconds(20)

    /// Reads the sequence into `stream`, a page at a time; returns how it ended.
    let feed: @Sendable (FlowElementStream) async -> Result<Void, any Error>

    init<Elements: AsyncSequence & Sendable>(_ elements: Elements) where Elements.Element: Sendable {
        feed = { stream in
            var page: [Any] = []
            var pageStarted = ContinuousClock.now
            do {
                for try await element in elements {
                    if page.isEmpty { pageStarted = .now }
                    page.append(element)
                    if page.count >= Self.pageSize || ContinuousClock.now - pageStarted >= Self.pageDelay {
                        try await stream.emit(page)
                        page = []
                    }
                }
                if !page.isEmpty { try await stream.emit(page) }
                return .success(())
            } catch {
                return .failure(error)
            }
        }
    }
}
