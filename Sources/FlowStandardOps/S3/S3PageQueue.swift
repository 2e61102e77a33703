import Synchronization

/// The pages one folder's paginator has listed and its reader has not taken yet: at most
/// ``capacity``, after which the paginator waits. ``S3Listing/stream(prefix:recursive:concurrency:from:deliver:)``
/// gives one to each folder it lists at once, and reads them in the folders' order: the folder
/// being read streams, the next ones list ahead by a few pages each, and memory stays bounded.
final class S3PageQueue: Sendable {
    /// Pages listed ahead at most.
    static let capacity = 8

    private struct State {
        var pages: [S3ListedPage] = []
        /// Set when the paginator is done: its failure, or `nil` for the end.
        var end: Result<Void, any Error>?
        var reader: CheckedContinuation<S3ListedPage?, any Error>?
        var writer: CheckedContinuation<Void, Never>?
        /// The reader stopped: pages are no longer wanted.
        var abandoned = false
        /// What listing the folder took, set with its end.
        var requests = 0
        var filteredOut = 0
    }

    private let state = Mutex(State())

    /// Adds a page, waiting while ``capacity`` pages wait to be read.
    ///
    /// - Throws: `CancellationError` once the reader has stopped.
    func put(_ page: S3ListedPage) async throws {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let step = state.withLock { state -> PutStep in
                if state.abandoned { return .goOn }
                if let reader = state.reader {
                    state.reader = nil
                    return .hand(reader)
                }
                state.pages.append(page)
                guard state.pages.count >= Self.capacity else { return .goOn }
                // Resumed by the read that takes a page, or by `abandon()`.
                state.writer = continuation
                return .wait
            }
            switch step {
            case .hand(let reader):
                reader.resume(returning: page)
                continuation.resume()
            case .goOn: continuation.resume()
            case .wait: break
            }
        }
        if state.withLock({ $0.abandoned }) { throw CancellationError() }
    }

    private enum PutStep {
        case hand(CheckedContinuation<S3ListedPage?, any Error>)
        case goOn
        case wait
    }

    /// Requests the folder's listing sent and objects its filter left out, once it is done.
    var totals: (requests: Int, filteredOut: Int) {
        state.withLock { ($0.requests, $0.filteredOut) }
    }

    /// The paginator is done (`.success`, with what it took), or failed.
    func finish(_ end: Result<(requests: Int, filteredOut: Int), any Error>) {
        let reader = state.withLock { state -> CheckedContinuation<S3ListedPage?, any Error>? in
            switch end {
            case .success(let totals):
                state.end = .success(())
                (state.requests, state.filteredOut) = totals
            case .failure(let error): state.end = .failure(error)
            }
            defer { state.reader = nil }
            return state.reader
        }
        guard let reader else { return }
        switch end {
        case .success: reader.resume(returning: nil)
        case .failure(let error): reader.resume(throwing: error)
        }
    }

    /// The next page, `nil` after the last.
    ///
    /// - Throws: the paginator's failure.
    func next() async throws -> S3ListedPage? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<S3ListedPage?, any Error>) in
            let (answer, writer) = state.withLock { state -> (Result<S3ListedPage?, any Error>?, CheckedContinuation<Void, Never>?) in
                if !state.pages.isEmpty {
                    let page = state.pages.removeFirst()
                    defer { state.writer = nil }
                    return (.success(page), state.writer)
                }
                switch state.end {
                case .success: return (.success(nil), nil)
                case .failure(let error): return (.failure(error), nil)
                case nil:
                    state.reader = continuation
                    return (nil, nil)
                }
            }
            writer?.resume()
            if let answer { continuation.resume(with: answer) }
        }
    }

    /// The reader stops: a waiting paginator goes on and its next ``put(_:)`` throws.
    func abandon() {
        let writer = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.abandoned = true
            state.pages = []
            defer { state.writer = nil }
            return state.writer
        }
        writer?.resume()
    }
}
