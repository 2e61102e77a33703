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

extension FlowOperation {
    /// Puts out one page as ``emit(_:to:)`` does, with where the listing stood before it
    /// (`position`: the continuation token that fetched the page, a folder and a token, an
    /// offset in a file; any small value the op can go on from).
    ///
    /// The engine keeps, in the run's journal, the position of the last page before which every
    /// element of the group has succeeded. A run resumed after it was cut off
    /// (`flow-coordinator resume`) then hands that position back (``resumedPosition(for:)``),
    /// and the op goes on listing from it instead of listing again what the journal holds. The
    /// listing must give the same pages in the same order each time for the same store: the
    /// group finds its elements again by their index. An op that emits with positions keeps no
    /// checkpoint of its own (``saveCheckpoint(_:)``): the listing's is kept in its place.
    ///
    /// - Throws: as ``emit(_:to:)``.
    public func emit(_ page: [Any], to key: String, from position: FlowValue) async throws {
        if let stream = pageReader(for: key) {
            try await stream.emit(page, from: position)
            return
        }
        try await emit(page, to: key)
    }

    /// Where to go on listing for `key` in a resumed run: the position given with the page to go
    /// on from (``emit(_:to:from:)``), whose elements the op's next page then stands for; `nil`
    /// to list from the beginning (a first run, a run whose listing kept no position yet, an op
    /// whose pages go to no group). Ask before emitting the first page: asked later, it answers
    /// as it did then, or `nil`.
    public func resumedPosition(for key: String) -> FlowValue? {
        pageReader(for: key)?.resumedPosition()
    }
}
