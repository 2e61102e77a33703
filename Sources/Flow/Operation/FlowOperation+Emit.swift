extension FlowOperation {
    /// Puts out one page of a list the op makes, under the bucket key `key`, as soon as it has
    /// it: for lists too long to build whole (a folder tree, a bucket's keys).
    ///
    /// When the step after this op is a group whose `input` is `key`, and the op runs in the
    /// coordinator's process (as `ListFilesOp` does), the group starts on the second page (or at
    /// the op's end, for a list of one page) while the op goes on, and ends when the op has finished and the last element is done; the bucket
    /// never holds the list. Otherwise (no such group, or the op runs on a worker) the pages are
    /// kept and become the op's output at `key`, the whole list in order, when it finishes: the
    /// same flow works either way.
    ///
    /// While the group is behind by a few pages, `emit` waits: the op lists no faster than the
    /// group runs, and memory stays flat.
    ///
    /// - Parameters:
    ///   - page: the next elements, in order.
    ///   - key: the bucket key of the list (the op's output key).
    /// - Throws: `CancellationError` when the group taking the pages is over (it failed, or the
    ///   run stopped): the op should stop and finish.
    public func emit(_ page: [Any], to key: String) async throws {
        if let stream = pageReader(for: key) {
            try await stream.emit(page)
            return
        }
        lock.withLock {
            guard let context, !context.isFinished else { return }
            context.emitted[key, default: []].append(contentsOf: page)
        }
    }

    /// Whether pages emitted to `key` (``emit(_:to:)``) go to a group as they come: the op runs
    /// before a group reading `key`, in the coordinator's process. An op that makes its list
    /// differently when nobody takes pages (sorted whole, say) asks this first.
    public func hasPageReader(for key: String) -> Bool {
        pageReader(for: key) != nil
    }

    private func pageReader(for key: String) -> FlowElementStream? {
        let stream = lock.withLock { context?.stream }
        return stream?.key == key ? stream : nil
    }
}
