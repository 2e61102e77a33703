/// Everything wrong with a flow file or bucket file, found in one pass.
///
/// ``FlowFileLoader`` reports every problem it finds, not only the first, so that a user can fix a
/// file in one go. Each problem is a ``Diagnostic`` printed as `FILE:LINE:COLUMN: message`.
public struct FlowFileError: Error, CustomStringConvertible, Sendable {
    /// One problem, at one place in a file.
    public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
        /// Where the problem is. Line and column are 1-based; a line of 0 means the file as a whole
        /// (for example one that cannot be read), and is printed without line and column.
        public let location: FlowSourceLocation
        /// What is wrong and what to do about it.
        public let message: String

        /// Creates a diagnostic.
        ///
        /// - Parameters:
        ///   - location: where the problem is; line 0 for the file as a whole.
        ///   - message: what is wrong and what to do about it.
        public init(location: FlowSourceLocation, message: String) {
            self.location = location
            self.message = message
        }

        /// `FILE:LINE:COLUMN: message`, or `FILE: message` for the file as a whole.
        public var description: String {
            location.line > 0 ? "\(location): \(message)" : "\(location.file): \(message)"
        }
    }

    /// All problems found, in file order.
    public let diagnostics: [Diagnostic]

    /// Creates an error.
    ///
    /// - Parameter diagnostics: the problems, in file order.
    public init(diagnostics: [Diagnostic]) {
        self.diagnostics = diagnostics
    }

    /// One diagnostic per line, in file order.
    public var description: String {
        diagnostics.map(\.description).joined(separator: "\n")
    }
}
