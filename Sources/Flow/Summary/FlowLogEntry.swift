public import Foundation

/// One summary line.
public struct FlowLogEntry: Sendable, Hashable {
    /// When it happened.
    public var time: Date
    /// The text after the time stamp, for example `[SimplePrintOp] WillStart`.
    public var text: String {
        get {
            switch content {
            case .text(let text): return text
            case .labelled(let label, let rest): return label.line(rest)
            case .deferred(let text): return text.text
            }
        }
        set { content = .text(newValue) }
    }
    /// The group element the line belongs to, if any.
    var element: FlowElementMark?
    private var content: Content

    private enum Content: Sendable {
        case text(String)
        /// An op's line: its label's parts (shared by all its lines), joined with the rest only
        /// when the line is read.
        case labelled(FlowLabel, String)
        case deferred(FlowDeferredText)
    }

    /// Creates a line.
    public init(time: Date, text: String) {
        self.time = time
        content = .text(text)
    }

    init(time: Date, text: String, element: FlowElementMark?) {
        self.time = time
        content = .text(text)
        self.element = element
    }

    /// An op's line, `label` and `rest` joined by a space when it is read: neither the label nor
    /// the line is put together while the flow runs (a summary that is never printed never
    /// makes them).
    init(time: Date, label: FlowLabel, rest: String, element: FlowElementMark?) {
        self.time = time
        content = .labelled(label, rest)
        self.element = element
    }


    /// A line whose text is made the first time it is read (a summary printed, a line
    /// streamed): for lines that print bucket values that cannot change meanwhile.
    init(time: Date, deferred text: FlowDeferredText) {
        self.time = time
        content = .deferred(text)
    }

    public static func == (lhs: FlowLogEntry, rhs: FlowLogEntry) -> Bool {
        lhs.time == rhs.time && lhs.text == rhs.text && lhs.element == rhs.element
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(time)
        hasher.combine(text)
        hasher.combine(element)
    }
}

/// A summary line's text, made once, when it is first read, from bucket values that cannot
/// change meanwhile (``FlowSummary/isSettled(_:depth:)``: texts, numbers, dates and lists of
/// them), which it keeps under its lock until then.
final class FlowDeferredText: Sendable {
    private enum State {
        case deferred(values: [Any], make: @Sendable ([Any]) -> String)
        case made(String)
    }

    private let state: FlowLocked<State>

    init(values: [Any], _ make: @escaping @Sendable ([Any]) -> String) {
        state = .make(.deferred(values: values, make: make))
    }

    var text: String {
        state.withLock { state in
            switch state {
            case .made(let text):
                return text
            case .deferred(let values, let make):
                let text = make(values)
                state = .made(text)
                return text
            }
        }
    }
}

extension FlowLogEntry {
    /// The line `make` writes of `values`: made when the summary is written if every value is
    /// settled (``FlowSummary/isSettled(_:depth:)``), at once otherwise. A group's million-value
    /// input and output lists cost nothing until a summary is printed.
    init(time: Date, describing values: [Any], _ make: @escaping @Sendable ([Any]) -> String) {
        guard values.allSatisfy({ FlowSummary.isSettled($0) }) else {
            self.init(time: time, text: make(values))
            return
        }
        self.init(time: time, deferred: FlowDeferredText(values: values, make))
    }
}
