import Foundation
import Yams

extension FlowFileReader {
    /// The keys of a group's `input: {…}` map.
    static let inputFileKeys = ["file", "format", "columns"]
    /// The keys of a group's `output: {…}` map.
    static let outputFileKeys = ["file"]
    /// The names `format:` takes.
    static let inputFormatNames = ["lines", "jsonl", "csv", "s3-inventory"]

    /// A group's `input:`: a bucket key, or `{file: PATH, format: lines|jsonl|csv|s3-inventory,
    /// columns: [...]}`. `nil` when it is wrong (reported).
    mutating func readGroupInput(_ node: Yams.Node) -> (key: String, file: FlowGroupInputFile?)? {
        guard case .mapping(let mapping) = node else {
            return readString("input", node, meaning: "the bucket key of the input array, or {file: PATH}").map { ($0, nil) }
        }
        let fields = fields(of: mapping, allowed: Self.inputFileKeys, in: "input")
        guard let fileNode = fields["file"] else {
            report("input as a map reads a file: add 'file: <path of a JSON lines, lines or CSV file>'", at: node)
            return nil
        }
        guard let path = readString("input.file", fileNode, meaning: "the path of the file the group reads its elements from") else { return nil }
        var columns: [String]?
        if let value = fields["columns"] {
            guard let read = readColumns(value) else { return nil }
            columns = read
        }
        guard let formatNode = fields["format"] else {
            if columns != nil {
                report("columns needs a format: add 'format: csv' or 'format: s3-inventory'", at: node)
                return nil
            }
            return ("", FlowGroupInputFile(path: path))
        }
        guard let name = readString("input.format", formatNode, meaning: Self.inputFormatNames.joined(separator: ", ")) else { return nil }
        let format: FlowInputFormat
        switch name {
        case "lines": format = .lines
        case "jsonl": format = .jsonLines
        case "csv": format = .csv(columns: columns)
        case "s3-inventory":
            guard let columns else {
                report("format: s3-inventory needs columns: the inventory's manifest.json fileSchema, e.g. \"Bucket, Key, Size\"", at: formatNode)
                return nil
            }
            format = .s3Inventory(columns: columns)
        default:
            report("input.format must be one of \(Self.inputFormatNames.joined(separator: ", ")), found '\(name)'", at: formatNode)
            return nil
        }
        if columns != nil, name == "lines" || name == "jsonl" {
            report("columns is for format: csv or s3-inventory, not \(name)", at: fields.key("columns") ?? node)
            return nil
        }
        return ("", FlowGroupInputFile(path: path, format: format))
    }

    /// `columns:` as a list of names or one text of names separated by commas (as an S3
    /// Inventory's `fileSchema` is written).
    private mutating func readColumns(_ node: Yams.Node) -> [String]? {
        var names: [String]?
        switch node {
        case .sequence(let sequence):
            names = []
            for item in sequence {
                guard let name = readString("columns", item, meaning: "a column name") else { return nil }
                names?.append(name)
            }
        default:
            names = readString("columns", node, meaning: "column names, a list or text separated by commas")?
                .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        guard let names, !names.isEmpty, !names.contains(where: \.isEmpty) else {
            if names != nil { report("columns must name every column, found an empty name", at: node) }
            return nil
        }
        return names
    }

    /// A group's `output:`: a bucket key, or `{file: PATH}`. `nil` when it is wrong (reported).
    mutating func readGroupOutput(_ node: Yams.Node) -> (key: String, file: String?)? {
        guard case .mapping(let mapping) = node else {
            return readString("output", node, meaning: "the bucket key to collect the results at, or {file: PATH}").map { ($0, nil) }
        }
        let fields = fields(of: mapping, allowed: Self.outputFileKeys, in: "output")
        guard let fileNode = fields["file"] else {
            report("output as a map writes a file: add 'file: <path of the JSON lines file to write>'", at: node)
            return nil
        }
        return readString("output.file", fileNode, meaning: "the path of the JSON lines file the outputs are written to").map { ("", $0) }
    }
}
