/// A group's input list, read element by element.
///
/// A list of integers, strings or numbers (what a flow file's bucket and most Swift callers give)
/// is kept as it is: casting it to `[Any]` first boxed each element through a dynamic cast, 4% of
/// an in-process group's time (perf, `flow-bench 20000 1`). Any other array is read as `[Any]`.
/// Not `Sendable` (an `[Any]` list): the group's feed holds it under its lock.
struct FlowGroupElements {
    private enum Storage {
        case integers([Int])
        case strings([String])
        case doubles([Double])
        case values([Any])
    }

    private let storage: Storage

    /// The elements of a bucket value that is an array, `nil` for anything else.
    init?(_ value: Any?) {
        guard let value else { return nil }
        // Exact types only: `as? [Int]` would convert an `[Any]` of integers element by element.
        let type = type(of: value)
        if type == [Int].self {
            storage = .integers(value as! [Int])
        } else if type == [String].self {
            storage = .strings(value as! [String])
        } else if type == [Double].self {
            storage = .doubles(value as! [Double])
        } else if let list = value as? [Any] {
            storage = .values(list)
        } else {
            return nil
        }
    }

    /// How many elements there are.
    var count: Int {
        switch storage {
        case .integers(let list): return list.count
        case .strings(let list): return list.count
        case .doubles(let list): return list.count
        case .values(let list): return list.count
        }
    }

    /// Whether there are none.
    var isEmpty: Bool { count == 0 }

    /// The valid indices.
    var indices: Range<Int> { 0..<count }

    /// The element at `index`.
    subscript(index: Int) -> Any {
        switch storage {
        case .integers(let list): return list[index]
        case .strings(let list): return list[index]
        case .doubles(let list): return list[index]
        case .values(let list): return list[index]
        }
    }
}
