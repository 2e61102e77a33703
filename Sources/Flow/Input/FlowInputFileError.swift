/// A record of a group's input file that could not be read, or a file that could not be opened.
package struct FlowInputFileError: Error, CustomStringConvertible, Equatable {
    package let path: String
    /// The line the record begins on, `nil` for the file as a whole.
    package let line: Int?
    package let reason: String

    init(path: String, line: Int?, _ reason: String) {
        self.path = path
        self.line = line
        self.reason = reason
    }

    package var description: String {
        "input file \(path)" + (line.map { ", line \($0)" } ?? "") + ": \(reason)"
    }
}
