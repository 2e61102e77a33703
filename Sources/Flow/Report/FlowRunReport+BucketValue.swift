import Foundation

extension FlowRunReport {
    /// A bucket value as the report encodes it.
    ///
    /// Strings, numbers, Booleans, null, arrays and maps are plain JSON. Bytes are
    /// `{"$bytes": "BASE64"}`, dates ISO 8601 strings, a double that JSON cannot hold (NaN,
    /// infinity) `{"$double": "nan"}`, and a value with no ``FlowValue`` form (an instance of the
    /// user's own class, say) `{"$description": "\(value)"}`.
    public enum BucketValue: Encodable, Sendable, Hashable {
        /// A value with a ``FlowValue`` form.
        case value(FlowValue)
        /// A value without one: its `String(describing:)`.
        case description(String)

        /// Converts an in-process bucket value.
        public init(any: Any) {
            if let value = FlowValue(any: any) {
                self = .value(value)
            } else {
                self = .description(String(describing: any))
            }
        }

        public func encode(to encoder: any Encoder) throws {
            switch self {
            case .value(let value): try Self.encode(value, to: encoder)
            case .description(let text): try Self.encodeTagged("$description", text, to: encoder)
            }
        }

        private static func encode(_ value: FlowValue, to encoder: any Encoder) throws {
            switch value {
            case .null:
                var container = encoder.singleValueContainer()
                try container.encodeNil()
            case .bool(let flag):
                var container = encoder.singleValueContainer()
                try container.encode(flag)
            case .integer(let number):
                var container = encoder.singleValueContainer()
                try container.encode(number)
            case .double(let number) where number.isFinite:
                var container = encoder.singleValueContainer()
                try container.encode(number)
            case .double(let number):
                try encodeTagged("$double", number.isNaN ? "nan" : (number > 0 ? "inf" : "-inf"), to: encoder)
            case .string(let text):
                var container = encoder.singleValueContainer()
                try container.encode(text)
            case .bytes(let data):
                try encodeTagged("$bytes", data.base64EncodedString(), to: encoder)
            case .date(let date):
                var container = encoder.singleValueContainer()
                try container.encode(FlowRunReport.timestamp(date))
            case .array(let items):
                var container = encoder.unkeyedContainer()
                for item in items { try container.encode(BucketValue.value(item)) }
            case .map(let items):
                var container = encoder.container(keyedBy: AnyKey.self)
                for (key, item) in items { try container.encode(BucketValue.value(item), forKey: AnyKey(key)) }
            }
        }

        private static func encodeTagged(_ tag: String, _ text: String, to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            try container.encode(text, forKey: AnyKey(tag))
        }
    }

    /// A coding key for any string: map keys and `$` tags.
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }

        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
