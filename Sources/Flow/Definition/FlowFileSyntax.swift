import Foundation
import Yams

/// Turns YAML or JSON text into a Yams node tree, or the parser's complaint into a diagnostic.
///
/// JSON goes through the same parser: JSON is YAML's flow syntax, so JSON errors get a line and a
/// column too.
enum FlowFileSyntax {
    /// What parsing found.
    enum Outcome {
        /// A document.
        case document(Yams.Node)
        /// No document at all: the text is empty, blank, or only comments.
        case empty
        /// The text is not valid YAML or JSON.
        case invalid(FlowFileError.Diagnostic)
    }

    /// Parses one YAML or JSON document.
    ///
    /// - Parameters:
    ///   - text: the file's text.
    ///   - file: the file's path as given, for locations.
    static func parse(_ text: String, file: String) -> Outcome {
        if let refusal = refusedKeyAliases(in: text, file: file) { return .invalid(refusal) }
        do {
            guard let node = try Yams.compose(yaml: text, FlowCoreSchema.resolver) else { return .empty }
            return .document(node)
        } catch let error as YamlError {
            return .invalid(diagnostic(for: error, text: text, file: file))
        } catch {
            return .invalid(.init(location: .init(file: file, line: 1, column: 1), message: "cannot parse: \(error)"))
        }
    }

    /// A diagnostic at the parser's mark, with libyaml's wording turned into a sentence.
    static func diagnostic(for error: YamlError, text: String, file: String) -> FlowFileError.Diagnostic {
        func at(_ line: Int, _ column: Int, _ message: String) -> FlowFileError.Diagnostic {
            .init(location: .init(file: file, line: max(1, line), column: max(1, column)), message: message)
        }
        switch error {
        case let .scanner(_, problem, mark, _) where problem == "found character that cannot start any token"
            && character(atLine: mark.line, column: mark.column, in: text) == "\t":
            return at(mark.line, mark.column, "a tab: YAML indents with spaces, not tabs; replace it with spaces")
        case let .scanner(context, problem, mark, _),
             let .parser(context, problem, mark, _),
             let .composer(context, problem, mark, _):
            return at(mark.line, mark.column, syntaxMessage(context: context, problem: problem))
        case let .reader(problem, offset, _, _):
            let (line, column) = lineAndColumn(ofCharacterOffset: offset ?? 0, in: text)
            return at(line, column, "cannot read the text: \(problem)")
        case let .duplicatedKeysInMapping(duplicates, context):
            let keys = duplicates.map { "'\($0)'" }.joined(separator: ", ")
            let message = duplicates.count == 1
                ? "key \(keys) appears more than once in this map: keep one"
                : "keys \(keys) appear more than once in this map: keep one of each"
            return at(context.mark.line, context.mark.column, message)
        default:
            return at(1, 1, "cannot parse: \(error)")
        }
    }

    private static func syntaxMessage(context: YamlError.Context?, problem: String) -> String {
        // Yams' own wording for a second `---` document reads oddly out of context.
        if problem == "but found another document" {
            return "a flow file holds one document: remove the second '---' and what follows it"
        }
        if problem == "found undefined alias" {
            return "unknown alias: define an anchor '&name' before using '*name'"
        }
        guard let context else { return "invalid YAML or JSON: \(problem)" }
        return "invalid YAML or JSON: \(problem) (\(context.text) that starts at line \(context.mark.line), column \(context.mark.column))"
    }

    /// The character at a 1-based line and column (columns in Unicode scalars, as libyaml counts
    /// them), `nil` past the text.
    static func character(atLine line: Int, column: Int, in text: String) -> Unicode.Scalar? {
        guard line >= 1, column >= 1 else { return nil }
        let lines = text.unicodeScalars.split(separator: "\n", maxSplits: line, omittingEmptySubsequences: false)
        guard lines.count >= line else { return nil }
        let scalars = lines[line - 1]
        guard scalars.count >= column else { return nil }
        return scalars[scalars.index(scalars.startIndex, offsetBy: column - 1)]
    }

    /// The 1-based line and column of the character at `offset`, columns counted in Unicode scalars
    /// as libyaml counts them.
    static func lineAndColumn(ofCharacterOffset offset: Int, in text: String) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for character in text.prefix(offset) {
            if character.isNewline {
                line += 1
                column = 1
            } else {
                column += character.unicodeScalars.count
            }
        }
        return (line, column)
    }
}
