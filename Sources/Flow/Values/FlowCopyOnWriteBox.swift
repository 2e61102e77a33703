/// A value kept in one shared heap box until a copy changes it (copy on write), for a struct of
/// many fields that is copied far more often than changed: a copy retains one box, not each of
/// its strings, maps and values.
///
/// Reading gives the value in place; ``change(_:)`` copies the box first when another copy shares it.
package struct FlowCopyOnWriteBox<Value: Sendable>: Sendable {
    // @unchecked: the value changes only in `change(_:)`, while the box holds the one reference.
    @usableFromInline
    final class Storage: @unchecked Sendable {
        // Unchecked: `change(_:)` holds the one reference, so no other access can overlap.
        @usableFromInline @exclusivity(unchecked) var value: Value

        @inlinable
        init(_ value: Value) {
            self.value = value
        }
    }

    @usableFromInline
    var storage: Storage

    /// Boxes `value`.
    @inlinable
    package init(_ value: Value) {
        storage = Storage(value)
    }

    /// The value, read in place.
    @inlinable
    package var value: Value {
        _read { yield storage.value }
    }

    /// Changes the value, in this box when no other copy shares it, else in a copy of it.
    @inlinable @inline(__always)
    package mutating func change<Result>(_ body: (inout Value) -> Result) -> Result {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.value) }
        return body(&storage.value)
    }

    /// Whether both share one box, so their values are the same without comparing them.
    @inlinable
    package func sharesBox(with other: Self) -> Bool {
        storage === other.storage
    }
}

extension FlowCopyOnWriteBox: Equatable where Value: Equatable {
    @inlinable
    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.sharesBox(with: rhs) || lhs.value == rhs.value
    }
}

extension FlowCopyOnWriteBox: Hashable where Value: Hashable {
    @inlinable
    package func hash(into hasher: inout Hasher) {
        hasher.combine(value)
    }
}
