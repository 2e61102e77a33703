import CYaml
import Foundation

extension FlowFileSyntax {
    /// A refusal, before the document is composed, of keys that would make composing it take
    /// exponential time.
    ///
    /// Yams checks each map for duplicate keys by hashing them, and hashes a key that is a map or
    /// a list through every value it holds, aliases expanded: a file whose level N keys are
    /// aliases of level N-1's maps (`l2: &l2 {*l1a : 1, *l1b : 2}`) doubles the work with each
    /// level (10 s at 20 levels, years at 40, from 3 KB) while it holds hardly any values, so the
    /// reader's own budgets (``FlowFileReader/nodeLimit``), which run after composing, never see
    /// it. Keys of a flow file or a bucket file are text, so an alias of a map or a list inside a
    /// key is refused outright, and aliases of texts inside keys count against
    /// ``FlowFileReader/expansionByteLimit``. One pass over libyaml's events, linear in the text,
    /// for text that may hold such keys at all (``mayUseAliasesInKeys(_:)``).
    ///
    /// - Returns: the refusal, at the alias (or, past the byte budget, at the aliased text); `nil`
    ///   when the keys are fine, or the text is not valid YAML (composing it says why).
    static func refusedKeyAliases(in text: String, file: String) -> FlowFileError.Diagnostic? {
        guard mayUseAliasesInKeys(text) else { return nil }
        var bytes = Array(text.utf8)
        var scan = KeyAliasScan(file: file, byteBudget: FlowFileReader.expansionByteLimit + bytes.count)
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { return nil }
        defer { yaml_parser_delete(&parser) }
        return bytes.withUnsafeMutableBufferPointer { buffer in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            var event = yaml_event_t()
            while yaml_parser_parse(&parser, &event) == 1 {
                defer { yaml_event_delete(&event) }
                if event.type == YAML_STREAM_END_EVENT { return nil }
                if let refusal = scan.take(event) { return refusal }
            }
            return nil
        }
    }
}

extension FlowFileSyntax {
    /// Whether `text` may hold an alias in a key, told from its bytes alone so that a file that
    /// cannot is not parsed twice: it needs an anchor (`&`), and a key that holds an alias is
    /// either an explicit one (`? `) or an implicit one, which YAML keeps to one line, so a `*`
    /// comes before a `:` on that line (`*a : 1`, `[*a, *b]: 1`, `{*a : 1}`). A file of values
    /// (`copy: *base`, `- *item`) is not looked at again.
    static func mayUseAliasesInKeys(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard bytes.contains(UInt8(ascii: "&")) else { return false }
            var starOnLine = false
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "?"): return true
                case UInt8(ascii: "*"): starOnLine = true
                case UInt8(ascii: ":"): if starOnLine { return true }
                case UInt8(ascii: "\n"), UInt8(ascii: "\r"): starOnLine = false
                default: break
                }
            }
            return false
        }
    }
}

/// The state of ``FlowFileSyntax/refusedKeyAliases(in:file:)``'s pass over events.
private struct KeyAliasScan {
    /// What an anchor names.
    enum Anchored {
        /// A text of this many UTF-8 bytes, written at this place.
        case text(bytes: Int, at: FlowSourceLocation)
        /// A map or a list.
        case collection(isMap: Bool)
    }

    /// A map or list being read: whether it is (inside) a key, and for a map whether its next
    /// node is a key.
    struct Frame {
        var isMap: Bool
        var nextIsKey = true
        var inKey: Bool
        var anchor: String?
    }

    let file: String
    let byteBudget: Int
    var anchors: [String: Anchored] = [:]
    var frames: [Frame] = []
    /// UTF-8 bytes of text in keys, each alias's anew.
    var keyBytes = 0

    init(file: String, byteBudget: Int) {
        self.file = file
        self.byteBudget = byteBudget
    }

    /// Takes one event; the refusal when it is an alias the keys may not hold.
    mutating func take(_ event: yaml_event_t) -> FlowFileError.Diagnostic? {
        // Made only where it is kept: most events are plain values.
        var location: FlowSourceLocation {
            FlowSourceLocation(file: file, line: Int(event.start_mark.line) + 1, column: Int(event.start_mark.column) + 1)
        }
        switch event.type {
        case YAML_SCALAR_EVENT:
            let inKey = enterNode()
            let length = Int(event.data.scalar.length)
            if let anchor = Self.name(event.data.scalar.anchor) { anchors[anchor] = .text(bytes: length, at: location) }
            if inKey { keyBytes += length }
        case YAML_ALIAS_EVENT:
            let inKey = enterNode()
            guard inKey, let name = Self.name(event.data.alias.anchor), let anchored = anchors[name] else { return nil }
            return keyUse(of: name, anchored, at: location)
        case YAML_SEQUENCE_START_EVENT:
            frames.append(Frame(isMap: false, inKey: enterNode(), anchor: Self.name(event.data.sequence_start.anchor)))
        case YAML_MAPPING_START_EVENT:
            frames.append(Frame(isMap: true, inKey: enterNode(), anchor: Self.name(event.data.mapping_start.anchor)))
        case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
            if let frame = frames.popLast(), let anchor = frame.anchor { anchors[anchor] = .collection(isMap: frame.isMap) }
        default:
            break
        }
        return nil
    }

    /// A node starts: whether it is a key or inside one (and the map it is in expects the other
    /// half of the pair next).
    private mutating func enterNode() -> Bool {
        guard let last = frames.indices.last else { return false }
        let inKey = frames[last].inKey || (frames[last].isMap && frames[last].nextIsKey)
        if frames[last].isMap { frames[last].nextIsKey.toggle() }
        return inKey
    }

    /// An alias inside a key: refused when it names a map or a list, or when its text passes the
    /// byte budget.
    private mutating func keyUse(of name: String, _ anchored: Anchored, at location: FlowSourceLocation) -> FlowFileError.Diagnostic? {
        switch anchored {
        case .collection(let isMap):
            let what = isMap ? "a map" : "a list"
            return .init(location: location, message: "the alias '*\(name.prefix(80))' of \(what) is used in a key: a key must be text, and "
                         + "\(what) as a key is read again for every use of it (a file of such keys can take years to read); "
                         + "write the key out as text")
        case .text(let bytes, let anchorLocation):
            keyBytes += bytes
            guard keyBytes > byteBudget else { return nil }
            return .init(location: anchorLocation, message: "the file expands to more than \(FlowFileReader.expansionByteLimit >> 20) MiB of text "
                         + "beyond what it writes out, through aliases ('*name') of values such as this one: alias them fewer times, "
                         + "or write the file out smaller")
        }
    }

    private static func name(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        pointer.map { String(cString: $0) }
    }
}
