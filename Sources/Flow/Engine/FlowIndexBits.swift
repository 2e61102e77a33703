/// A set of element indices as bits: a group's replayed elements, an eighth of a byte each, for
/// groups of any size.
struct FlowIndexBits: Sendable {
    private var words: [UInt64] = []
    /// How many indices are in the set.
    private(set) var count = 0

    /// Whether the set is empty.
    var isEmpty: Bool { count == 0 }

    /// Adds `index` (not negative); `false` when it was there already.
    @discardableResult
    mutating func insert(_ index: Int) -> Bool {
        let (word, bit) = index.quotientAndRemainder(dividingBy: 64)
        if word >= words.count { words.append(contentsOf: repeatElement(0, count: word - words.count + 1)) }
        let mask = UInt64(1) << UInt64(bit)
        guard words[word] & mask == 0 else { return false }
        words[word] |= mask
        count += 1
        return true
    }

    /// Whether `index` is in the set.
    func contains(_ index: Int) -> Bool {
        guard index >= 0 else { return false }
        let (word, bit) = index.quotientAndRemainder(dividingBy: 64)
        return word < words.count && words[word] & (UInt64(1) << UInt64(bit)) != 0
    }
}
