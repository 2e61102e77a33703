import Foundation
import Yams

/// How plain YAML text is typed: the YAML 1.2 core schema, everywhere a value is read (flow files,
/// `bucket:`, `with:`, step keys, `--bucket` YAML files and `--set`).
///
/// YAML 1.1, Yams' default, types text a user reads as text: `NO` and `off` are false, `0123` is
/// 83 (octal), `12:30` is 750 (base 60) and `2024-01-01` a date. The core schema keeps those as
/// text (`0123`, digits only, is the integer 123) and types only:
///
/// | Plain text                                          | Type    |
/// |-----------------------------------------------------|---------|
/// | `true`, `True`, `TRUE`, `false`, `False`, `FALSE`   | bool    |
/// | `null`, `Null`, `NULL`, `~`, nothing                | null    |
/// | `[-+]?[0-9]+`, `0o[0-7]+`, `0x[0-9a-fA-F]+`         | integer |
/// | `1.5`, `-.5`, `1e3`, `2.5E-3`, `.inf`, `-.inf`, `.nan` | double  |
/// | anything else                                       | text    |
///
/// `<<` stays the merge key (a YAML 1.1 type that flow files use). Quoted text is always text; an
/// explicit tag (`!!timestamp 2024-01-01`) still types its value.
enum FlowCoreSchema {
    /// The core schema as Yams' regular-expression rules, for composing (Yams compares mapping
    /// keys by their resolved tags) and as the reference ``FlowFileReader/plainScalarTag(_:)``
    /// is tested against. Reading types plain text without them.
    static let resolver: Resolver = {
        let rules: [(Tag.Name, String)] = [
            (.null, #"\A(?:~|null|Null|NULL|)\z"#),
            (.bool, #"\A(?:true|True|TRUE|false|False|FALSE)\z"#),
            (.int, #"\A(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)\z"#),
            (.float, #"\A(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\z"#),
            (.merge, #"\A<<\z"#),
        ]
        // The patterns are constants; one that failed to compile would drop its type, which the
        // tests comparing this resolver with `plainScalarTag` would show.
        return rules.reduce(Resolver.basic) { resolver, rule in (try? resolver.appending(rule.0, rule.1)) ?? resolver }
    }()

    /// A plain scalar's implicit tag, resolved by ``resolver`` when Yams asks.
    static var implicitTag: Tag { Tag(.implicit, resolver) }

    /// `true`/`false` in the core schema's spellings; `nil` for anything else (`yes`, `on`).
    static func bool(_ text: String) -> Bool? {
        switch text {
        case "true", "True", "TRUE": return true
        case "false", "False", "FALSE": return false
        default: return nil
        }
    }

    /// A core-schema integer: decimal digits with an optional sign (a leading zero is still
    /// decimal), `0o` octal or `0x` hex; `nil` for other text or one past 64 bits.
    static func integer(_ text: String) -> Int64? {
        if text.hasPrefix("0o") { return Int64(text.dropFirst(2), radix: 8) }
        if text.hasPrefix("0x") { return Int64(text.dropFirst(2), radix: 16) }
        guard text.utf8.contains(where: { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              text.utf8.dropFirst().allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int64(text)
    }

    /// A core-schema float (or integer, as a double): `1.5`, `1e3`, `.5`, `.inf`, `-.inf`, `.nan`.
    static func double(_ text: String) -> Double? {
        switch text {
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .infinity
        case "-.inf", "-.Inf", "-.INF": return -.infinity
        case ".nan", ".NaN", ".NAN": return .nan
        default: break
        }
        if let integer = integer(text) { return Double(integer) }
        // Swift's parser also takes `nan`, `infinity` and hex floats; the core schema does not.
        switch FlowFileReader.plainScalarTag(text) {
        case .float, .int: return Double(text)
        default: return nil
        }
    }
}
