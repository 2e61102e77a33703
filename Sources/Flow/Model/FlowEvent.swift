public import Foundation

/// Something an op did while it ran: a log line or a bucket write, with the time it happened on
/// the machine that ran the op.
///
/// One type for both sides of the wire: in a process the value is whatever the op handed
/// `setData` (``FlowRecordedEvent``); on the wire it is a ``FlowValue`` (`WireEvent`, in
/// `FlowWire`, which converts between the two).
public struct FlowEvent<Value> {
    /// What happened.
    public enum Kind {
        /// A `log(message:)` line.
        case log(String)
        /// A `setData(name:value:)` call.
        case set(key: String, value: Value)
    }

    /// When it happened, on the machine that ran the op.
    public var time: Date
    /// What happened.
    public var kind: Kind

    /// Creates an event.
    public init(time: Date, kind: Kind) {
        self.time = time
        self.kind = kind
    }
}

/// `Sendable` when its values are (a wire event's ``FlowValue``s); an in-process event
/// (``FlowRecordedEvent``, `Any` values) travels inside a ``FlowTaskResult``.
extension FlowEvent: Sendable where Value: Sendable {}
extension FlowEvent.Kind: Sendable where Value: Sendable {}
extension FlowEvent.Kind: Equatable where Value: Equatable {}
extension FlowEvent.Kind: Hashable where Value: Hashable {}
extension FlowEvent: Equatable where Value: Equatable {}
extension FlowEvent: Hashable where Value: Hashable {}

/// An event as an op in this process recorded it.
public typealias FlowRecordedEvent = FlowEvent<Any>
