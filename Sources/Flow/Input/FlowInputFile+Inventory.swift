import Foundation

/// An S3 Inventory CSV list read as a group's input (`format: s3-inventory`): its rows as elements.
extension FlowInputFile {
    /// A row of an S3 Inventory CSV as an element: `{key, size, …}` by its columns, the key
    /// decoded (``inventoryKey(_:)``), the size a number.
    func inventoryElement(_ fields: [String], columns: [String], line: Int) throws -> FlowValue {
        var map: [String: FlowValue] = [:]
        for (name, field) in zip(columns, fields) {
            switch name {
            case "key":
                guard let key = Self.inventoryKey(field) else {
                    throw FlowInputFileError(path: path, line: line, "the key \"\(field.prefix(80))\" is not URL-encoded as an inventory's keys are")
                }
                map[name] = .string(key)
            case "size":
                guard let size = Int64(field) else {
                    throw FlowInputFileError(path: path, line: line, "the size \"\(field.prefix(40))\" is not a whole number")
                }
                map[name] = .integer(size)
            default:
                map[name] = .string(field)
            }
        }
        return .map(map)
    }

    /// An inventory's column name as an element's key: `Key` `key`, `LastModifiedDate`
    /// `lastModified`, `ETag` `etag`, others with their first letter lowered.
    static func inventoryName(_ column: String) -> String {
        let name = column.trimmingCharacters(in: .whitespaces)
        switch name {
        case "LastModifiedDate": return "lastModified"
        case "ETag": return "etag"
        default: return name.prefix(1).lowercased() + name.dropFirst()
        }
    }

    /// An inventory's URL-encoded key decoded: `%XX` escapes, and `+` for a space.
    static func inventoryKey(_ field: String) -> String? {
        field.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
