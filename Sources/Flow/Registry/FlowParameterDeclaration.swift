/// One parameter an op takes under `with:`, as it is registered with
/// ``FlowOperationRegistry/register(_:summary:primaryInputParamKey:primaryOutputParamKey:placement:prepareInput:resolveParameters:prepareGroup:parameters:make:)``.
///
/// An op registered with a list of declarations takes only those keys: a flow file that gives it
/// another one is refused when it is loaded (`validate` and `run` exit 2), with the key's place
/// and a "did you mean" when a declared key is close. An op registered without a list takes any
/// key, as before declarations existed.
///
/// ```swift
/// registry.register("ResizeOp", parameters: [
///     .init("width", "the width in pixels", kind: .integer),
///     .init("keepAspect", "scales the height to match (default true)", kind: .bool),
/// ]) { parameters in
///     ResizeOp(width: try parameters.integer("width"), keepAspect: try parameters.bool("keepAspect", default: true))
/// }
/// ```
public struct FlowParameterDeclaration: Sendable, Hashable {
    /// What kind of value a parameter takes, for `flow-worker --list-ops` and messages; the op's
    /// own reading of the value (``FlowParameters``) decides what it accepts.
    public struct Kind: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The kind's name as printed.
        public let rawValue: String

        /// A kind named `rawValue`, for kinds not listed here.
        public init(rawValue: String) { self.rawValue = rawValue }

        public var description: String { rawValue }

        /// Text.
        public static let text = Kind(rawValue: "text")
        /// A whole number.
        public static let integer = Kind(rawValue: "integer")
        /// A number (integers are accepted).
        public static let number = Kind(rawValue: "number")
        /// `true` or `false`.
        public static let bool = Kind(rawValue: "bool")
        /// Seconds, as a number.
        public static let seconds = Kind(rawValue: "seconds")
        /// A size: a number of bytes, or with `KiB`, `MiB`, `GiB`.
        public static let size = Kind(rawValue: "size")
        /// A list.
        public static let list = Kind(rawValue: "list")
        /// A map.
        public static let map = Kind(rawValue: "map")
    }

    /// The key under `with:`.
    public let name: String
    /// One line saying what it does (and its default).
    public let summary: String
    /// The kind of value it takes, when said.
    public let kind: Kind?

    /// Declares a parameter.
    ///
    /// - Parameters:
    ///   - name: the key under `with:`.
    ///   - summary: one line saying what it does, and its default.
    ///   - kind: the kind of value it takes, for listings; `nil` when not said.
    public init(_ name: String, _ summary: String = "", kind: Kind? = nil) {
        self.name = name
        self.summary = summary
        self.kind = kind
    }
}
