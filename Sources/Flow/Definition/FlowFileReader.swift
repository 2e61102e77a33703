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
    /// When set, `with:` keys of the ops it declares parameters for must be among them.
    let parameterDeclarations: FlowOperationRegistry?
    /// The problems found so far, in the order found.
    private(set) var diagnostics: [FlowFileError.Diagnostic] = []
    /// Nodes walked so far, counting each alias use anew, against ``nodeBudget``.
    var visitedNodes = 0
    /// The most nodes the document may have: ``nodeLimit`` more than its text has bytes.
    var nodeBudget = FlowFileReader.nodeLimit
    /// Bytes of text (keys and values) walked so far, counting each alias use anew, against ``byteBudget``.
    var visitedBytes = 0
    /// The most bytes of text the document may have: ``expansionByteLimit`` more than its text has bytes.
    var byteBudget = FlowFileReader.expansionByteLimit
    /// The node being walked when a budget was passed, where the refusal points.
    var overBudgetNode: Yams.Node?

    init(file: String, registry: FlowOperationRegistry? = nil, parameterDeclarations: FlowOperationRegistry? = nil) {
        self.file = file
        self.registry = registry
        self.parameterDeclarations = parameterDeclarations
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
                if let suggestion = FlowNameSuggestion.closest(to: name, among: allowed) {
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

    /// The resolved tag of a node: the explicit tag, or the one its plain text has in the YAML 1.2
    /// core schema (``FlowCoreSchema``).
    static func tagName(of node: Yams.Node) -> Tag.Name {
        // A plain scalar's tag is implicit (its unresolved tag's text is empty). Yams would resolve
        // it by trying regular expressions in turn, about 4 us a scalar (perf: 72% of reading a
        // flow file with a 20,000-value list); it is told from its bytes instead.
        if case .scalar(let scalar) = node, scalar.tag.rawValue.isEmpty {
            return plainScalarTag(scalar.string)
        }
        return Tag.Name(rawValue: node.tag.rawValue)
    }

    /// The tag plain text has in the YAML 1.2 core schema, told from its bytes without regular
    /// expressions; it must agree with ``FlowCoreSchema/resolver``'s patterns (its tests compare
    /// them).
    ///
    /// Only text starting with one of `tTfFnN~<-+.0123456789`, or empty, can be anything but text.
    static func plainScalarTag(_ text: String) -> Tag.Name {
        var text = text
        return text.withUTF8 { bytes in
            guard let first = bytes.first else { return .null }
            switch first {
            case UInt8(ascii: "t"), UInt8(ascii: "T"), UInt8(ascii: "f"), UInt8(ascii: "F"), UInt8(ascii: "n"), UInt8(ascii: "N"):
                guard bytes.count <= 5 else { return .str }
                switch String(decoding: bytes, as: UTF8.self) {
                case "true", "True", "TRUE", "false", "False", "FALSE": return .bool
                case "null", "Null", "NULL": return .null
                default: return .str
                }
            case UInt8(ascii: "~"):
                return bytes.count == 1 ? .null : .str
            case UInt8(ascii: "<"):
                return bytes.count == 2 && bytes[1] == UInt8(ascii: "<") ? .merge : .str
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."):
                return numberTag(bytes)
            default:
                return .str
            }
        }
    }

    /// `.int`, `.float` or `.str` for text that starts like a number: the core schema's
    /// `[-+]?[0-9]+`, `0o[0-7]+`, `0x[0-9a-fA-F]+`,
    /// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`, `[-+]?\.(inf|Inf|INF)` and
    /// `\.(nan|NaN|NAN)`.
    private static func numberTag(_ bytes: UnsafeBufferPointer<UInt8>) -> Tag.Name {
        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        func isHexDigit(_ byte: UInt8) -> Bool {
            isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
        }
        let count = bytes.count
        if count > 2, bytes[0] == UInt8(ascii: "0"), bytes[1] == UInt8(ascii: "o") {
            return bytes[2...].allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "7") } ? .int : .str
        }
        if count > 2, bytes[0] == UInt8(ascii: "0"), bytes[1] == UInt8(ascii: "x") {
            return bytes[2...].allSatisfy(isHexDigit) ? .int : .str
        }
        var index = 0
        let signed = bytes[0] == UInt8(ascii: "-") || bytes[0] == UInt8(ascii: "+")
        if signed { index += 1 }
        if count - index == 4, bytes[index] == UInt8(ascii: ".") {
            switch String(decoding: bytes[(index + 1)...], as: UTF8.self) {
            case "inf", "Inf", "INF": return .float
            case "nan", "NaN", "NAN": return signed ? .str : .float
            default: break
            }
        }
        let integerStart = index
        while index < count, isDigit(bytes[index]) { index += 1 }
        let integerDigits = index - integerStart
        if index == count { return integerDigits > 0 ? .int : .str }
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            while index < count, isDigit(bytes[index]) { index += 1 }
            guard integerDigits > 0 || index > fractionStart else { return .str }
        } else if integerDigits == 0 {
            return .str
        }
        if index < count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") { index += 1 }
            let exponentStart = index
            while index < count, isDigit(bytes[index]) { index += 1 }
            guard index > exponentStart else { return .str }
        }
        return index == count ? .float : .str
    }

    /// The tag ``FlowCoreSchema/resolver`` gives plain text through its regular expressions
    /// alone, which ``plainScalarTag(_:)`` must agree with (its tests compare them).
    static func resolverTag(_ text: String) -> Tag.Name {
        Tag.Name(rawValue: Yams.Node(text, FlowCoreSchema.implicitTag).tag.rawValue)
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
