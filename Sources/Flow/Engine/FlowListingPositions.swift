/// Where a listing that feeds a group stood before each page it emitted
/// (``FlowOperation/emit(_:to:from:)``), and the checkpoint it keeps from them: a run resumed
/// after it was cut off goes on listing from the last page before which every element had
/// succeeded, instead of listing again what its journal holds (issue 49).
///
/// A pure value: ``FlowElementStream`` keeps it under its lock.
struct FlowListingPositions {
    /// The pages emitted with a position and not yet passed: their first element's index and
    /// the position before them. Sorted by `start`; only the page of the last checkpoint and
    /// those after it are kept.
    private var pages: [(start: Int, position: FlowValue)] = []
    /// The first index of the page of the checkpoint saved last, -1 for none.
    private var savedStart = -1

    /// The checkpoint's keys (a map, so that it can grow without confusing an older reader).
    private static let indexKey = "listingIndex"
    private static let positionKey = "listingPosition"

    /// The checkpoint an earlier life of the run saved, as the index of the first element of the
    /// page to go on from and the position the op gave with that page; `nil` for none (or a
    /// checkpoint that is not one of these).
    static func decode(_ value: FlowValue?) -> (index: Int, position: FlowValue)? {
        guard case .map(let fields)? = value, case .integer(let index)? = fields[indexKey], index >= 0,
              let position = fields[positionKey] else { return nil }
        return (Int(index), position)
    }

    /// The checkpoint of the page starting at element `index`, emitted with `position`.
    static func encode(index: Int, position: FlowValue) -> FlowValue {
        .map([indexKey: .integer(Int64(index)), positionKey: position])
    }

    /// A page whose first element is `start` was emitted with `position`.
    mutating func emitted(start: Int, position: FlowValue) {
        pages.append((start, position))
    }

    /// Every element before `mark` has succeeded (and `end` elements are emitted so far): the
    /// checkpoint to save now, if the page to go on from moved, and the mark at which to ask
    /// again (the next page's first element, or `end` when it has not come yet).
    /// An op that gives no positions is not asked again (`next` is `Int.max`): it gives them with
    /// every page or with none.
    mutating func reached(_ mark: Int, end: Int) -> (save: FlowValue?, next: Int) {
        guard savedStart >= 0 || !pages.isEmpty else { return (nil, Int.max) }
        guard let last = pages.lastIndex(where: { $0.start <= mark }) else { return (nil, pages.first?.start ?? end) }
        pages.removeFirst(last)
        let next = pages.count > 1 ? pages[1].start : end
        guard pages[0].start != savedStart else { return (nil, next) }
        savedStart = pages[0].start
        return (Self.encode(index: pages[0].start, position: pages[0].position), next)
    }
}

/// Where a group's elements come from a page at a time with positions to go on from: the pages
/// an op emits (``FlowElementStream``), or an input file (``FlowFileListing``).
protocol FlowListingProgress: AnyObject, Sendable {
    /// The index of the first element of this life of the run: 0, or where a resumed listing
    /// went on.
    var startIndex: Int { get }
    /// Every element before `mark` succeeded: keeps the checkpoint if the page to go on from
    /// moved, and returns the mark at which to call again.
    func reached(_ mark: Int) -> Int
}

/// Which elements of a group fed by a listing have succeeded, as the first index not known to
/// have (the mark), for ``FlowListingPositions``: only the engine's task touches it, once per
/// accepted result (replayed ones too).
///
/// The mark goes no further than the first element that failed: a resumed run that retries
/// failed elements (`--retry-failed`) must find them again in the listing. Successes beyond the
/// mark are kept as bits from the mark on, so a slow element holds an eighth of a byte per
/// element that finished after it.
final class FlowSuccessMark {
    private let stream: any FlowListingProgress
    private var mark: Int
    /// Successes at and after `wordBase * 64`, one bit each.
    private var bits: [UInt64] = []
    private var wordBase: Int
    /// The mark at which the stream is asked again.
    private var threshold: Int
    /// The first element that failed: the mark stops there.
    private var failedAt = Int.max
    /// Nothing more to follow: the listing gives no positions.
    private var stopped = false

    init(stream: any FlowListingProgress) {
        self.stream = stream
        mark = stream.startIndex
        wordBase = mark / 64
        threshold = mark
    }

    /// Element `index` failed (finally, for this life of the run).
    func failed(_ index: Int) {
        guard index >= mark, index < failedAt else { return }
        failedAt = index
        // Successes past it no longer count.
        let keep = max(0, index / 64 - wordBase + 1)
        if keep < bits.count { bits.removeLast(bits.count - keep) }
    }

    /// Element `index` succeeded.
    func succeeded(_ index: Int) {
        guard !stopped, index >= mark, index < failedAt else { return }
        guard index == mark else {
            let (word, bit) = index.quotientAndRemainder(dividingBy: 64)
            let position = word - wordBase
            if position >= bits.count { bits.append(contentsOf: repeatElement(0, count: position - bits.count + 1)) }
            bits[position] |= UInt64(1) << UInt64(bit)
            return
        }
        mark += 1
        while mark < failedAt, isSet(mark) { mark += 1 }
        let passed = mark / 64 - wordBase
        if passed > 0 {
            bits.removeFirst(min(passed, bits.count))
            wordBase += passed
        }
        if mark >= threshold {
            threshold = stream.reached(mark)
            // A listing without positions: nothing to keep.
            if threshold == .max {
                stopped = true
                bits = []
            }
        }
    }

    private func isSet(_ index: Int) -> Bool {
        let (word, bit) = index.quotientAndRemainder(dividingBy: 64)
        let position = word - wordBase
        return position >= 0 && position < bits.count && bits[position] & (UInt64(1) << UInt64(bit)) != 0
    }
}
