import Foundation
import Synchronization

/// A group's elements as its feed takes them, in index order: an array in memory (its count known
/// from the start), or a file read a page at a time (``FlowGroupInputFile``), its count known once
/// the file ends. Only the page being handed out is in memory.
///
/// Not `Sendable` (an `[Any]` page): the feed holds it under its lock.
struct FlowGroupSource {
    /// Elements read from a file at a time.
    static let pageSize = 1_000

    private let array: FlowGroupElements?
    private var file: FlowInputFile?
    private var page: [Any] = []
    /// The index of the page's first element.
    private var pageStart = 0
    /// How many elements are known: all of an array's, those read so far of a file's.
    private(set) var listed: Int
    /// Whether every element is known (an array's always are).
    private(set) var isComplete: Bool
    /// Why the file could not be read further: the group fails with it once its elements in
    /// flight are done.
    private(set) var failure: FlowInputFileError?
    /// Called with ``listed`` and ``isComplete`` after each page is read.
    private let onPage: (Int, Bool) -> Void

    /// The elements of an array.
    init(array: FlowGroupElements) {
        self.array = array
        listed = array.count
        isComplete = true
        onPage = { _, _ in }
    }

    /// The elements of `input`, opened now and read as they are taken.
    ///
    /// - Throws: ``FlowInputFileError`` when the file cannot be opened.
    init(file input: FlowGroupInputFile, onPage: @escaping (Int, Bool) -> Void) throws {
        array = nil
        file = try FlowInputFile(path: input.path, format: input.format)
        listed = 0
        isComplete = false
        self.onPage = onPage
    }

    /// The element at `index`, reading the file's pages up to it; `nil` past the last element, or
    /// past what could be read. Indices are asked for in increasing order: pages before the
    /// current one are gone.
    mutating func element(at index: Int) -> Any? {
        if let array { return index < array.count ? array[index] : nil }
        while index >= pageStart + page.count, readPage() {}
        let offset = index - pageStart
        return offset >= 0 && offset < page.count ? page[offset] : nil
    }

    /// Whether there is an element at `index`, reading pages up to it as ``element(at:)`` does.
    mutating func has(_ index: Int) -> Bool {
        if index < listed { return true }
        while index >= listed, readPage() {}
        return index < listed
    }

    /// Reads the next page in place of the current one; `false` when there is none (the file
    /// ended, failed or was closed).
    private mutating func readPage() -> Bool {
        guard !isComplete, failure == nil, var reader = file else { return false }
        file = nil  // the reader's buffer stays unique while it reads
        do {
            let values = try reader.nextPage(limit: Self.pageSize)
            pageStart += page.count
            page = values.map(\.anyValue)
            listed += page.count
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
        return !page.isEmpty && failure == nil
    }

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
    func update(listed: Int, isComplete: Bool) {
        known.store(listed, ordering: .releasing)
        if isComplete { complete.store(true, ordering: .releasing) }
    }
}
