extension S3Listing {
    /// Lists as ``list(prefix:recursive:concurrency:)`` does, but gives the kept objects to
    /// `deliver` a page at a time as they come (for `ListObjectsOp` feeding a group), never
    /// holding the listing, in an order that is the same every time the store holds the same
    /// keys (a resumed run's group finds each element where it was):
    ///
    /// - One paginator: the store's order, page after page.
    /// - Paginators in parallel: first the objects found while splitting the prefix into folders
    ///   (those directly in the top levels, held until the split ends), sorted; then each folder
    ///   split off, in the order of its name, its pages in the store's order. `concurrency`
    ///   folders are listed at once: the one being delivered streams, the next ones list ahead
    ///   by up to ``S3PageQueue/capacity`` pages each and then wait for their turn.
    ///
    /// - Returns: the counts (requests, prefixes, objects left out); `objects` stays empty.
    /// - Throws: as ``list(prefix:recursive:concurrency:)`` does; what `deliver` throws.
    func stream(prefix: String, recursive: Bool, concurrency: Int, from position: S3ListingPosition? = nil,
                deliver: ([S3ObjectEntry], S3ListingPosition) async throws -> Void) async throws -> Result {
        var result = Result()
        guard recursive && concurrency > 1 else {
            result.prefixes = 1
            var start: String?
            if case .page(let token)? = position { start = token }
            let folder = try await listPages(prefix, root: prefix, delimiter: recursive ? nil : "/", from: start) { page in
                try await deliver(page.objects, .page(token: page.token))
            }
            result.requests = folder.requests
            result.filteredOut = folder.filteredOut
            return result
        }
        var frontier = [prefix]
        var level = 0
        while frontier.count < concurrency, level < Self.splitLevels, !frontier.isEmpty {
            let folders = try await listEach(frontier, root: prefix, delimiter: "/", concurrency: concurrency, into: &result)
            frontier = folders.flatMap(\.subfolders).filter { !skipsFolder(Self.relative(String($0.dropLast()), to: prefix)) }
            level += 1
        }
        // The objects of the top levels, sorted, before the folders below them; a resumed
        // listing skips what came before its position.
        let held = result.objects.sorted { $0.key < $1.key }
        result.objects = []
        var folders = frontier.sorted()
        var firstToken: String?
        switch position {
        case .top(let offset)?:
            try await deliverHeld(held, from: offset, deliver: deliver)
        case .folder(let folder, let token)?:
            folders.removeAll { $0 < folder }
            if folders.first == folder { firstToken = token }
        case .page?, nil:
            try await deliverHeld(held, from: 0, deliver: deliver)
        }
        try await streamFolders(folders, root: prefix, concurrency: concurrency, firstToken: firstToken, into: &result, deliver: deliver)
        return result
    }

    /// The objects of the top folder levels from `offset` on, a page at a time.
    private func deliverHeld(_ held: [S3ObjectEntry], from offset: Int,
                             deliver: ([S3ObjectEntry], S3ListingPosition) async throws -> Void) async throws {
        for start in stride(from: offset, to: held.count, by: pageSize) {
            try await deliver(Array(held[start..<min(held.count, start + pageSize)]), .top(offset: start))
        }
    }

    /// Lists `folders` without a delimiter, `concurrency` at once, and delivers their pages
    /// folder after folder in the order given.
    ///
    /// - Parameter firstToken: where the first folder's listing goes on (a resumed listing).
    private func streamFolders(_ folders: [String], root: String, concurrency: Int, firstToken: String?, into result: inout Result,
                               deliver: ([S3ObjectEntry], S3ListingPosition) async throws -> Void) async throws {
        guard !folders.isEmpty else { return }
        try await withThrowingTaskGroup(of: Void.self) { group in
            var queues: [S3PageQueue?] = []
            var started = 0
            var delivered = 0
            do {
                while delivered < folders.count {
                    while started < folders.count, started < delivered + concurrency {
                        let queue = S3PageQueue()
                        let folder = folders[started]
                        let token = started == 0 ? firstToken : nil
                        queues.append(queue)
                        started += 1
                        group.addTask {
                            do {
                                let listed = try await listPages(folder, root: root, delimiter: nil, from: token) { try await queue.put($0) }
                                queue.finish(.success((listed.requests, listed.filteredOut)))
                            } catch {
                                queue.finish(.failure(error))
                            }
                        }
                    }
                    guard let queue = queues[delivered] else { break }
                    while let page = try await queue.next() {
                        try await deliver(page.objects, .folder(folders[delivered], token: page.token))
                    }
                    let totals = queue.totals
                    result.prefixes += 1
                    result.requests += totals.requests
                    result.filteredOut += totals.filteredOut
                    queues[delivered] = nil
                    delivered += 1
                }
            } catch {
                for queue in queues { queue?.abandon() }
                group.cancelAll()
                throw error
            }
        }
    }

    /// Lists every page of `prefix`, with `delimiter` or without, giving each page's kept
    /// objects to `page` (a page the filters emptied is not given).
    ///
    /// - Returns: what it took and found besides the objects (its subfolders, with a delimiter).
    ///
    /// - Parameter start: the continuation token to start from (a resumed listing), `nil` for the
    ///   first page.
    func listPages(_ prefix: String, root: String, delimiter: String?, from start: String? = nil,
                   page body: (S3ListedPage) async throws -> Void) async throws -> Folder {
        var folder = Folder()
        var token = start
        repeat {
            try Task.checkCancellation()
            let page = try await self.page(prefix, delimiter: delimiter, continuation: token)
            folder.requests += 1
            var kept: [S3ObjectEntry] = []
            kept.reserveCapacity(page.objects.count)
            for object in page.objects {
                if keeps(Self.relative(object.key, to: root), object) {
                    kept.append(object)
                } else {
                    folder.filteredOut += 1
                }
            }
            folder.subfolders += page.commonPrefixes
            if !kept.isEmpty { try await body(S3ListedPage(objects: kept, token: token)) }
            token = page.nextContinuationToken
        } while token != nil
        return folder
    }
}
