public import Foundation

/// A bucket value that can cross a process boundary: the closed set of types the wire protocol and
/// flow files carry.
///
/// Inside one process a data bucket holds `Any`, as in the seed. Values leave the process as
/// `FlowValue` (``init(any:)``) and come back as plain Swift values (``anyValue``), so an op reads
/// `String`, `Int`, `Double`, `Bool`, `Data`, `Date`, `[Any]` and `[String: Any]` whichever side of
/// the wire it runs on.
public enum FlowValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case bytes(Data)
    case date(Date)
    case array([FlowValue])
    case map([String: FlowValue])
}

extension FlowValue {
    /// Converts an in-process bucket value into a serialisable one.
    ///
    /// - Parameter any: a value as an op stored it in a data bucket.
    /// - Returns: `nil` when the value (or a value inside it) has no serialisable form, for example
    ///   a class instance of the user's own.
    public init?(any: Any) {
        if let known = Self.byExactType(any) {
            guard let value = known else { return nil }
            self = value
            return
        }
        switch any {
        case let value as FlowValue: self = value
        case let value as String: self = .string(value)
        case let value as Substring: self = .string(String(value))
        case let value as Bool: self = .bool(value)
        case let value as Int: self = .integer(Int64(value))
        case let value as Int64: self = .integer(value)
        case let value as Int32: self = .integer(Int64(value))
        case let value as UInt32: self = .integer(Int64(value))
        case let value as UInt8: self = .integer(Int64(value))
        case let value as Double: self = .double(value)
        case let value as Float: self = .double(Double(value))
        case let value as [Any]:
            guard let array = Self.array(value) else { return nil }
            self = array
        case let value as [String: Any]:
            guard let map = Self.map(value) else { return nil }
            self = map
        case let value as Data: self = .bytes(value)
        case let value as Date: self = .date(value)
        case let value as URL: self = .string(value.absoluteString)
        // Last: checking a list against a class bridges it to an NSArray, element by element.
        case is NSNull: self = .null
        default:
            // Optionals arrive boxed in `Any`; `nil` is `.null`, a wrapped value is unwrapped.
            let mirror = Mirror(reflecting: any)
            guard mirror.displayStyle == .optional else { return nil }
            guard let wrapped = mirror.children.first?.value else {
                self = .null
                return
            }
            self.init(any: wrapped)
        }
    }

    /// `any` converted by its exact type, for the types most values have: `nil` when its type is
    /// none of them, `.some(nil)` when it is one but holds a value with no serialisable form.
    @inline(__always)
    private static func byExactType(_ any: Any) -> FlowValue?? {
        // The common types first, by their exact type: a cast that fails (to `FlowValue` for a
        // `String`) searches the runtime's conformance tables, and one to the exact type is a
        // copy. Every group element and op output crosses here (callgrind: 1,800 instructions an
        // element through the casts of `init(any:)`, for a `String`).
        switch ObjectIdentifier(type(of: any)) {
        case ObjectIdentifier(String.self): return .string(any as! String)
        case ObjectIdentifier(FlowValue.self): return any as! FlowValue
        case ObjectIdentifier(Int.self): return .integer(Int64(any as! Int))
        case ObjectIdentifier(Double.self): return .double(any as! Double)
        case ObjectIdentifier(Bool.self): return .bool(any as! Bool)
        // Lists and maps of the exact types ops write (ListFilesOp's `[[String: String]]`, a
        // group's `[Any]` outputs): `as [Any]` below would make a new array of boxes, and each
        // element's `as [String: Any]` a new dictionary (3 µs an entry of a listing) in
        // `init(any:)`'s casts.
        case ObjectIdentifier([Any].self):
            return .some(array(any as! [Any]))
        case ObjectIdentifier([String: Any].self):
            return .some(map(any as! [String: Any]))
        case ObjectIdentifier([String].self): return .array((any as! [String]).map(FlowValue.string))
        case ObjectIdentifier([String: String].self): return .map((any as! [String: String]).mapValues(FlowValue.string))
        case ObjectIdentifier([[String: String]].self):
            return .array((any as! [[String: String]]).map { .map($0.mapValues(FlowValue.string)) })
        case ObjectIdentifier([[String: Any]].self):
            var items: [FlowValue] = []
            for element in any as! [[String: Any]] {
                guard let item = map(element) else { return .some(nil) }
                items.append(item)
            }
            return .array(items)
        case ObjectIdentifier(Optional<Any>.self):
            // An `Any?` passed as `Any` (a group element): unwrapped here, not by `init(any:)`'s
            // casts and its `Mirror`.
            guard let wrapped = Self.exactly(any, as: Optional<Any>.self) else { return FlowValue.null }
            return .some(FlowValue(any: wrapped))
        default: return nil
        }
    }

    /// A list of bucket values, `nil` when one of them has no serialisable form.
    private static func array(_ values: [Any]) -> FlowValue? {
        var items: [FlowValue] = []
        items.reserveCapacity(values.count)
        for element in values {
            guard let item = FlowValue(any: element) else { return nil }
            items.append(item)
        }
        return .array(items)
    }

    /// A map of bucket values, `nil` when one of them has no serialisable form.
    private static func map(_ values: [String: Any]) -> FlowValue? {
        var items: [String: FlowValue] = [:]
        for (key, element) in values {
            guard let item = FlowValue(any: element) else { return nil }
            items[key] = item
        }
        return .map(items)
    }

    /// `value` as the type it holds exactly: a dynamic cast, so an `Any` that holds an `Any?`
    /// gives that optional, not one wrapped around the `Any`.
    @inline(__always)
    private static func exactly<T>(_ value: Any, as type: T.Type) -> T {
        value as! T
    }

    /// The plain Swift value an op reads from its bucket: `String`, `Int`, `Double`, `Bool`, `Data`,
    /// `Date`, `[Any]`, `[String: Any]`, or `NSNull` for ``null``.
    public var anyValue: Any {
        switch self {
        case .null: return NSNull()
        case .bool(let value): return value
        case .integer(let value): return Int(value)
        case .double(let value): return value
        case .string(let value): return value
        case .bytes(let value): return value
        case .date(let value): return value
        case .array(let values): return values.map(\.anyValue)
        case .map(let values): return values.mapValues(\.anyValue)
        }
    }

    /// A name for the value's type, for error messages.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "bool"
        case .integer: return "integer"
        case .double: return "double"
        case .string: return "string"
        case .bytes: return "bytes"
        case .date: return "date"
        case .array: return "array"
        case .map: return "map"
        }
    }

    /// The string inside a ``string(_:)`` value, `nil` otherwise.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer inside an ``integer(_:)`` value, `nil` otherwise.
    public var integerValue: Int? {
        if case .integer(let value) = self { return Int(value) }
        return nil
    }

    /// The Boolean inside a ``bool(_:)`` value, `nil` otherwise.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The number inside an ``integer(_:)`` or ``double(_:)`` value, `nil` otherwise.
    public var doubleValue: Double? {
        switch self {
        case .double(let value): return value
        case .integer(let value): return Double(value)
        default: return nil
        }
    }
}

extension FlowValue: CustomStringConvertible {
    /// The value printed as the seed prints a bucket value: `"\(value)"` of the plain Swift value.
    public var description: String { String(describing: anyValue) }
}

extension Dictionary where Key == String, Value == Any {
    /// Converts a whole bucket for the wire.
    ///
    /// - Returns: the serialisable bucket, or the first key whose value cannot be serialised.
    package func flowValues() -> Result<[String: FlowValue], FlowValueConversionError> {
        var result: [String: FlowValue] = [:]
        for (key, value) in self {
            guard let converted = FlowValue(any: value) else {
                return .failure(FlowValueConversionError(key: key, typeName: String(describing: type(of: value))))
            }
            result[key] = converted
        }
        return .success(result)
    }
}

/// A bucket value that has no serialisable form and so cannot be sent to another process.
public struct FlowValueConversionError: Error, CustomStringConvertible, Sendable {
    /// The bucket key holding the value.
    public let key: String
    /// The Swift type of the value.
    public let typeName: String

    public var description: String {
        "<\(key)> holds a value of type <\(typeName)>, which cannot be sent to a worker: use a string, number, bool, bytes, date, array or map"
    }
}
