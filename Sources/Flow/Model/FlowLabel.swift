import Foundation

/// The bracketed tag the summary puts before an op's lines, `[Name tag @ worker]`, kept as its
/// parts until it is read.
struct FlowLabel: Sendable {
    let name: String
    let tag: String?
    let worker: String?

    /// The tag, a space and `rest`, made in one buffer.
    func line(_ rest: String) -> String {
        var line = ""
        line.reserveCapacity(name.utf8.count + (tag?.utf8.count ?? 0) + (worker?.utf8.count ?? 0) + rest.utf8.count + 7)
        Self.append(name: name, tag: tag, worker: worker, to: &line)
        line.append(" ")
        line.append(rest)
        return line
    }

    /// The tag alone, e.g. `[UploadFileOp 3f2a @ worker-2]`.
    static func make(name: String, tag: String?, worker: String?) -> String {
        var label = ""
        label.reserveCapacity(name.utf8.count + (tag?.utf8.count ?? 0) + (worker?.utf8.count ?? 0) + 6)
        append(name: name, tag: tag, worker: worker, to: &label)
        return label
    }

    private static func append(name: String, tag: String?, worker: String?, to text: inout String) {
        text.append("[")
        text.append(name)
        if let tag, !tag.isEmpty {
            text.append(" ")
            text.append(tag)
        }
        if let worker, !worker.isEmpty {
            text.append(" @ ")
            text.append(worker)
        }
        text.append("]")
    }
}
