import Foundation
import Yams

/// Walks a composed YAML tree into a flow definition or values, collecting every problem instead of
/// stopping at the first one.
///
/// Every `read…` method returns `nil` where it reported a problem and goes on with what it can still
/// check, so that one pass finds all problems in a file.
struct FlowFileReader {
    /// The file's path as given, for locations.
    let file: String
    /// When set, op names must be registered in it.
    let registry: FlowOperationRegistry?
    /// The problems found so far, in the order found.
    private(set) var diagnostics: [FlowFileError.Diagnostic] = []
    /// Nodes walked so far, counting each alias use anew, against ``nodeBudget``.
    var visitedNodes = 0
    /// The most nodes the document may have: ``nodeLimit`` more than its text has bytes.
    var nodeBudget = FlowFileReader.nodeLimit

    init(file: String, registry: FlowOperationRegistry? = nil) {
        self.file = file
        self.registry = registry
    }

    /// The problems found, in file order (by line, then column, keeping the order found for ties).
    var sortedDiagnostics: [FlowFileError.Diagnostic] {
        diagnostics.enumerated().sorted { lhs, rhs in
            let (left, right) = (lhs.element.location, rhs.element.location)
            if left.line != right.line { return left.line < right.line }
            if left.column != right.column { return left.column < right.column }
            return lhs.offset < rhs.offset
        }.map(\.element)
    }

    /// Where a node was written; the file's start when Yams has no mark for it.
    func location(of node: Yams.Node) -> FlowSourceLocation {
        location(of: node.mark)
    }

    /// A location for a Yams mark (1-based, as libyaml's are after Yams adds one).
    func location(of mark: Mark?) -> FlowSourceLocation {
        FlowSourceLocation(file: file, line: max(1, mark?.line ?? 1), column: max(1, mark?.column ?? 1))
    }

    /// Records a problem at a node.
    mutating func report(_ message: String, at node: Yams.Node) {
        report(message, at: location(of: node))
    }

    /// Records a problem at a location.
    mutating func report(_ message: String, at location: FlowSourceLocation) {
        diagnostics.append(.init(location: location, message: message))
    }

    /// A map's entries by key, after reporting keys that are not text or not among `allowed`.
    ///
    /// - Parameters:
    ///   - mapping: the map.
    ///   - allowed: the keys this map may have, in the order they are listed in messages.
    ///   - place: where the map is, for messages ("in group"); `nil` at the top level.
    mutating func fields(of mapping: Yams.Node.Mapping, allowed: [String], in place: String?) -> FlowFileFields {
        var fields = FlowFileFields()
        for (key, value) in mapping {
            guard case .scalar(let scalar) = key else {
                report("a key must be text, found \(Self.describe(key))", at: key)
                continue
            }
            let name = scalar.string
            guard allowed.contains(name) else {
                let where_ = place.map { " in \($0)" } ?? ""
                if let suggestion = FlowFileSuggestion.closest(to: name, among: allowed) {
                    report("unknown key '\(name)'\(where_); did you mean '\(suggestion)'?", at: key)
                } else {
                    let known = allowed.map { "'\($0)'" }.joined(separator: ", ")
                    report("unknown key '\(name)'\(where_); expected one of \(known)", at: key)
                }
                continue
            }
            fields.entries[name] = (key, value)
        }
        return fields
    }

    /// The text of a string field, reporting a missing, empty or non-text value.
    ///
    /// - Parameters:
    ///   - name: the field's key, for messages.
    ///   - node: the field's value.
    ///   - meaning: what the text names, for messages ("the bucket key of the input array").
    mutating func readString(_ name: String, _ node: Yams.Node, meaning: String) -> String? {
        guard case .scalar(let scalar) = node else {
            report("\(name) must be text (\(meaning)), found \(Self.describe(node))", at: node)
            return nil
        }
        switch Self.tagName(of: node) {
        case .str:
            guard !scalar.string.trimmingCharacters(in: .whitespaces).isEmpty else {
                report("\(name) is empty: give \(meaning)", at: node)
                return nil
            }
            return scalar.string
        case .null:
            report("\(name) is empty: give \(meaning)", at: node)
        default:
            report(
                "\(name) must be text (\(meaning)), found \(Self.describe(node)): quote it as \"\(scalar.string)\" to use it as text",
                at: node)
        }
        return nil
    }

    /// The resolved tag of a node: the explicit tag, or the one its plain text resolves to.
    static func tagName(of node: Yams.Node) -> Tag.Name {
        // A plain scalar's tag is implicit (its unresolved tag's text is empty): Yams resolves it
        // by trying up to seven regular expressions in turn, about 4 us a scalar (perf: 72% of
        // reading a flow file with a 20,000-value list). Most plain text is told without them.
        if case .scalar(let scalar) = node, scalar.tag.rawValue.isEmpty, let tag = plainScalarTag(scalar.string) {
            return tag
        }
        return Tag.Name(rawValue: node.tag.rawValue)
    }

    /// The tag Yams' default resolver gives plain text, where it is certain without its regular
    /// expressions; `nil` leaves the text to them.
    ///
    /// Every one of the resolver's patterns (bool, int, float, merge, null, timestamp, value)
    /// starts with one of `-+.0123456789<~=` or is one of the words `yes`, `no`, `true`, `false`,
    /// `on`, `off` and `null` in their spellings (five letters at most): other text is a string.
    /// Digits alone, signed or not and without a leading zero, are the int pattern's decimal form
    /// (the bool pattern, tried first, takes no digits).
    static func plainScalarTag(_ text: String) -> Tag.Name? {
        var utf8 = text.utf8.makeIterator()
        guard let first = utf8.next() else { return nil }
        switch first {
        case UInt8(ascii: "y"), UInt8(ascii: "Y"), UInt8(ascii: "n"), UInt8(ascii: "N"), UInt8(ascii: "t"), UInt8(ascii: "T"),
             UInt8(ascii: "f"), UInt8(ascii: "F"), UInt8(ascii: "o"), UInt8(ascii: "O"):
            return text.utf8.count > 5 ? .str : nil
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"):
            var digits = first >= UInt8(ascii: "0") ? 1 : 0
            var leadingZero = first == UInt8(ascii: "0")
            while let byte = utf8.next() {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                if digits == 0 { leadingZero = byte == UInt8(ascii: "0") }
                digits += 1
            }
            return digits > 0 && !(leadingZero && digits > 1) ? .int : nil
        case UInt8(ascii: "."), UInt8(ascii: "<"), UInt8(ascii: "~"), UInt8(ascii: "="):
            return nil
        default:
            return .str
        }
    }

    /// The tag Yams' default resolver gives plain text through its regular expressions alone,
    /// which ``plainScalarTag(_:)`` must agree with (its tests compare them).
    static func resolverTag(_ text: String) -> Tag.Name {
        Tag.Name(rawValue: Yams.Node(text).tag.rawValue)
    }

    /// A node as a message names it: "a map", "the integer 3", "the text 'abc'".
    static func describe(_ node: Yams.Node) -> String {
        switch node {
        case .mapping: return "a map"
        case .sequence: return "a list"
        case .alias: return "an alias"
        case .scalar(let scalar):
            switch tagName(of: node) {
            case .null: return "nothing"
            case .str: return "the text '\(scalar.string)'"
            case .int: return "the integer \(scalar.string)"
            case .float: return "the number \(scalar.string)"
            case .bool: return "the bool \(scalar.string)"
            case .timestamp: return "the date \(scalar.string)"
            default: return "'\(scalar.string)'"
            }
        }
    }
}

/// A map's entries by key, as ``FlowFileReader/fields(of:allowed:in:)`` checked them.
struct FlowFileFields {
    var entries: [String: (key: Yams.Node, value: Yams.Node)] = [:]

    /// The value under `name`, `nil` when the key is absent.
    subscript(name: String) -> Yams.Node? { entries[name]?.value }

    /// The key node of `name`, for locations.
    func key(_ name: String) -> Yams.Node? { entries[name]?.key }
}
