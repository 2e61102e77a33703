import Flow

/// Why a task or result cannot be put on the wire: a value that has no wire form, or one that
/// nests deeper than the receiver accepts. The sender finds it before sending, so no peer ever
/// receives a message it must drop (docs/PROTOCOL.md §6.2).
package struct WireEncodingError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What cannot be sent, as the user knows it: `bucket value <photos>`, `group element 3`.
    package let subject: String
    /// Why not.
    package let reason: String

    /// Creates an error.
    package init(subject: String, reason: String) {
        self.subject = subject
        self.reason = reason
    }

    /// A value whose Swift type has no wire form.
    static func unsendable(_ subject: String, value: Any) -> WireEncodingError {
        WireEncodingError(subject: subject, reason: "is of type \(type(of: value)), which cannot be sent between coordinator and "
            + "workers: use strings, numbers, bools, bytes, dates, arrays or maps")
    }

    /// Throws when `value` nests deeper than ``WireLimits/maximumValueDepth``.
    static func checkDepth(_ value: FlowValue, _ subject: @autoclosure () -> String) throws(WireEncodingError) {
        let depth = value.wireNestingDepth
        guard depth <= WireLimits.maximumValueDepth else {
            throw WireEncodingError(subject: subject(), reason: "nests arrays and maps \(depth) deep, and the protocol carries at most "
                + "\(WireLimits.maximumValueDepth): flatten it, or keep it out of the data bucket")
        }
    }

    package var description: String { "\(subject) \(reason)" }
}
