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
    func stream(prefix: String, recursive: Bool, concurrency: Int,
                deliver: ([S3ObjectEntry]) async throws -> Void) async throws -> Result {
        var result = Result()
        guard recursive && concurrency > 1 else {
            result.prefixes = 1
            let folder = try await listPages(prefix, root: prefix, delimiter: recursive ? nil : "/", page: deliver)
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
        // The objects of the top levels, sorted, before the folders below them.
        let held = result.objects.sorted { $0.key < $1.key }
        result.objects = []
        for start in stride(from: 0, to: held.count, by: pageSize) {
            try await deliver(Array(held[start..<min(held.count, start + pageSize)]))
        }
        try await streamFolders(frontier.sorted(), root: prefix, concurrency: concurrency, into: &result, deliver: deliver)
        return result
    }

    /// Lists `folders` without a delimiter, `concurrency` at once, and delivers their pages
    /// folder after folder in the order given.
    private func streamFolders(_ folders: [String], root: String, concurrency: Int, into result: inout Result,
                               deliver: ([S3ObjectEntry]) async throws -> Void) async throws {
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
                        queues.append(queue)
                        started += 1
                        group.addTask {
                            do {
                                let listed = try await listPages(folder, root: root, delimiter: nil) { try await queue.put($0) }
                                queue.finish(.success((listed.requests, listed.filteredOut)))
                            } catch {
                                queue.finish(.failure(error))
                            }
                        }
                    }
                    guard let queue = queues[delivered] else { break }
                    while let page = try await queue.next() { try await deliver(page) }
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
    func listPages(_ prefix: String, root: String, delimiter: String?,
                           page body: ([S3ObjectEntry]) async throws -> Void) async throws -> Folder {
        var folder = Folder()
        var token: String?
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
            if !kept.isEmpty { try await body(kept) }
            token = page.nextContinuationToken
        } while token != nil
        return folder
    }
}
