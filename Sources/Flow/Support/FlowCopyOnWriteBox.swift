/// A value kept in one shared heap box until a copy changes it (copy on write), for a struct of
/// many fields that is copied far more often than changed: a copy retains one box, not each of
/// its strings, maps and values. `FlowTaskResult` and FlowWire's `WireTask` keep their fields in one.
///
/// Read a field with `box.value.field`; change one with `box.change { $0.field = x }` or, in a
/// `_modify` accessor, `yield &box.unique.value.field`. Each accessor is `@inlinable` and
/// `@inline(__always)`, a plain `get` and no coroutine, with no protocol in the way: a user in
/// another module gets it specialized for its own fields and inlined to a load of the field. (A
/// first box whose `value` was a `_read` coroutine was called unspecialized from `WireTask`'s
/// getters: 6.9 M more instructions for a coordinator's 20,000 tasks, callgrind.)
///
/// Public, and underscored as not API: Swift 6.3 inlines no `package` declaration into another
/// module, `@inlinable` or `@_alwaysEmitIntoClient` alike, so a `package` box was called generic,
/// copying the whole value through its value witnesses for every field read (callgrind: 25% more
/// instructions for a coordinator's 20,000 tasks).
public struct _FlowCopyOnWriteBox<Value> {
    /// The heap box; its value changes only through `unique` or
    /// `change(_:)`, while the box holds the one reference.
    public final class Storage {
        // @exclusivity(unchecked): changed only while one box holds the one reference. Measured on
        // FlowTaskResult's fields with FlowResultInbox's (see there), 270 instructions an element
        // together; a WireTask was copied five times a task on a worker (perf: 5% of its time).
        @exclusivity(unchecked) public var value: Value

        @inlinable @inline(__always)
        public init(_ value: Value) {
            self.value = value
        }
    }

    @usableFromInline
    var storage: Storage

    /// Boxes `value`.
    @inlinable @inline(__always)
    public init(_ value: Value) {
        storage = Storage(value)
    }

    /// The value, read in place.
    @inlinable
    public var value: Value {
        @inline(__always) get { storage.value }
    }

    /// The box to change the value in, unshared first when another copy holds it.
    @inlinable
    public var unique: Storage {
        @inline(__always) mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.value) }
            return storage
        }
    }

    /// Changes the value, in this box when no other copy shares it, else in a copy of it.
    @inlinable @inline(__always)
    public mutating func change<Result>(_ body: (inout Value) -> Result) -> Result {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.value) }
        return body(&storage.value)
    }

    /// Whether both share one box, so that their values are the same without comparing them.
    @inlinable @inline(__always)
    public func sharesStorage(with other: Self) -> Bool {
        storage === other.storage
    }
}

// @unchecked: the value changes only while one box holds the one reference (`unique`, `change`).
extension _FlowCopyOnWriteBox.Storage: @unchecked Sendable where Value: Sendable {}

extension _FlowCopyOnWriteBox: Sendable where Value: Sendable {}
