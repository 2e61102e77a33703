import Foundation
import Synchronization

/// A group's elements as its feed takes them, in index order: an array in memory (its count known
/// from the start), a file read a page at a time (``FlowGroupInputFile``), or the pages a serial
/// op emits as it runs (``FlowElementStream``), their count known once the file or the op ends.
/// Only the page being handed out is in memory.
///
/// Not `Sendable` (an `[Any]` page): the feed holds it under its lock.
struct FlowGroupSource {
    /// Elements read from a file at a time.
    static let pageSize = 1_000

    private let array: FlowGroupElements?
    private var file: FlowInputFile?
    private let stream: FlowElementStream?
    /// Where each page of the file began, for a resumed run.
    private var fileListing: FlowFileListing?
    private var page: [Any] = []
    /// The index of the page's first element.
    private var pageStart = 0
    /// How many elements are known: all of an array's, those read so far of a file's.
    private(set) var listed: Int
    /// The first element's index: 0, or where a resumed listing goes on (``FlowElementStream/startIndex``).
    private(set) var startIndex = 0
    /// Whether every element is known (an array's always are).
    private(set) var isComplete: Bool
    /// Why the file could not be read further: the group fails with it once its elements in
    /// flight are done.
    private(set) var failure: FlowInputFileError?
    /// Called with ``listed`` and ``isComplete`` after each page is read.
    private let onPage: (Int, Bool) -> Void
    /// For an array whose elements go back to their hosts (`affinity:`), the order they are
    /// handed out in: position → index, hosts in turn (``hostsInTurn(_:)``); `nil`: index order.
    private var order: [Int]? = nil

    /// The elements of an array, handed out in index order, or with `interleavingHosts` one host
    /// at a time in turn (``hostsInTurn(_:)``).
    init(array: FlowGroupElements, interleavingHosts: Bool = false) {
        self.array = array
        stream = nil
        listed = array.count
        isComplete = true
        onPage = { _, _ in }
        order = interleavingHosts ? Self.hostsInTurn(array) : nil
    }

    /// The order in which an affinity group's elements are handed out: the first element of each
    /// host (``FlowAffinity/labels(of:)``; elements without one count as a host of their own), in
    /// the order the hosts first appear, then the second of each, and so on. A list of files
    /// `each: worker` joined host after host would otherwise fill the group's window with one
    /// host's files while the other hosts' workers sit idle. `nil` when the order would not
    /// change (one host, or the hosts already take turns).
    static func hostsInTurn(_ array: FlowGroupElements) -> [Int]? {
        var queues: [[Int]] = []
        var queueOf: [[String: String]?: Int] = [:]
        for index in array.indices {
            let labels = FlowAffinity.labels(of: array[index])
            if let queue = queueOf[labels] {
                queues[queue].append(index)
            } else {
                queueOf[labels] = queues.count
                queues.append([index])
            }
        }
        guard queues.count > 1 else { return nil }
        var order: [Int] = []
        order.reserveCapacity(array.count)
        var depth = 0
        while order.count < array.count {
            for queue in queues where depth < queue.count { order.append(queue[depth]) }
            depth += 1
        }
        return order.elementsEqual(array.indices) ? nil : order
    }

    /// The index of the element handed out at `position`: the same but for an affinity group's
    /// array (``init(array:interleavingHosts:)``).
    func index(at position: Int) -> Int {
        guard let order, position < order.count else { return position }
        return order[position]
    }

    /// The elements of `input`, opened now and read as they are taken.
    ///
    /// - Throws: ``FlowInputFileError`` when the file cannot be opened.
    /// - Parameter fileListing: where each page began, kept for a resumed run; when an earlier
    ///   life's checkpoint names a page of this same file, reading goes on from it.
    init(file input: FlowGroupInputFile, fileListing: FlowFileListing? = nil, onPage: @escaping (Int, Bool) -> Void) throws {
        array = nil
        stream = nil
        self.fileListing = fileListing
        var reader = try FlowInputFile(path: input.path, format: input.format)
        listed = 0
        if let fileListing, let resumable = fileListing.resumable {
            do {
                if try reader.skip(to: resumable.place) {
                    fileListing.wentOn(from: resumable.index)
                    pageStart = resumable.index
                    startIndex = resumable.index
                    listed = resumable.index
                }
            } catch {
                reader.close()
                throw error
            }
        }
        file = reader
        isComplete = false
        self.onPage = onPage
    }

    /// The elements of the pages `stream` brings.
    init(stream: FlowElementStream, onPage: @escaping (Int, Bool) -> Void) {
        array = nil
        self.stream = stream
        // A resumed listing's pages start where its checkpoint's page did.
        pageStart = stream.startIndex
        startIndex = pageStart
        listed = pageStart
        isComplete = false
        self.onPage = onPage
    }

    /// What is at an index.
    enum Lookup {
        case element(Any)
        /// Past the last element, or past what could be read.
        case end
        /// Not arrived yet: the stream's version to wait past (``FlowElementStream/waitForChange(after:)``).
        case notYet(version: Int)
    }

    /// The element handed out at `position` (its index, but for an affinity group's array:
    /// ``index(at:)``), reading pages up to it. Positions are asked for in increasing order:
    /// pages before the current one are gone.
    mutating func lookup(_ position: Int) -> Lookup {
        if let array { return position < array.count ? .element(array[index(at: position)]) : .end }
        // A file's or a stream's positions are its indices.
        while position >= pageStart + page.count {
            switch readPage() {
            case .read: continue
            case .end: return .end
            case .notYet(let version): return .notYet(version: version)
            }
        }
        let offset = position - pageStart
        return offset >= 0 ? .element(page[offset]) : .end
    }

    private enum PageRead {
        case read
        case end
        case notYet(version: Int)
    }

    /// Reads the next page in place of the current one.
    private mutating func readPage() -> PageRead {
        if let stream { return takePage(from: stream) }
        guard !isComplete, failure == nil, var reader = file else { return .end }
        file = nil  // the reader's buffer stays unique while it reads
        do {
            let place = reader.place
            let values = try reader.nextPage(limit: Self.pageSize)
            pageStart += page.count
            page = values.map(\.anyValue)
            listed += page.count
            if !page.isEmpty { fileListing?.read(start: pageStart, count: page.count, from: place) }
            if page.isEmpty {
                isComplete = true
                reader.close()
            } else {
                file = reader
            }
        } catch let error as FlowInputFileError {
            failure = error
            reader.close()
        } catch {
            failure = FlowInputFileError(path: reader.path, line: reader.line, "\(error)")
            reader.close()
        }
        onPage(listed, isComplete)
        return !page.isEmpty && failure == nil ? .read : .end
    }

    /// Takes the stream's next page in place of the current one.
    private mutating func takePage(from stream: FlowElementStream) -> PageRead {
        guard !isComplete else { return .end }
        switch stream.take() {
        case .page(let values):
            pageStart += page.count
            page = values
            listed += values.count
            onPage(listed, false)
            return .read
        case .ended:
            isComplete = true
            onPage(listed, true)
            return .end
        case .notYet(let version):
            return .notYet(version: version)
        }
    }

    /// The stream the elements come from, if they come from one.
    var elementStream: FlowElementStream? { stream }

    /// Where the elements' pages began, for a resumed run: the stream's, or the file's.
    var listingProgress: (any FlowListingProgress)? { stream ?? fileListing }

    /// Closes the file, if one is open: the group ended before reading it all.
    mutating func close() {
        file?.close()
        file = nil
    }
}

/// How many elements of a group are known so far, readable from any thread: a group read from a
/// file learns its count as it reads (``FlowGroupSource``).
final class FlowGroupListing: Sendable {
    private let known = Atomic<Int>(0)
    private let complete = Atomic<Bool>(false)

    /// A listing of `count` elements, complete when `count` is known; empty and incomplete
    /// otherwise.
    init(count: Int?) {
        if let count {
            known.store(count, ordering: .relaxed)
            complete.store(true, ordering: .relaxed)
        }
    }

    /// The elements known so far.
    var listed: Int { known.load(ordering: .acquiring) }
    /// The count, once every element is known.
    var total: Int? { complete.load(ordering: .acquiring) ? known.load(ordering: .acquiring) : nil }

    /// `listed` elements are known, and all are when `isComplete`.
    /// `false` when the count was known already: nothing changed.
    @discardableResult
    func update(listed: Int, isComplete: Bool) -> Bool {
        // A count known from the start (a stream that had ended) stays.
        guard !complete.load(ordering: .acquiring) else { return false }
        known.store(listed, ordering: .releasing)
        if isComplete { complete.store(true, ordering: .releasing) }
        return true
    }
}
