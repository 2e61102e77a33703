import Foundation

/// A group's outputs written as they come (`output: {file: PATH}`): one JSON line
/// `{"index": N, "output": VALUE}` per successful element with an output, in the order the
/// elements finish, so that a group of any size keeps none of them in memory. Values are encoded
/// as a run report encodes bucket values (``FlowRunReport/BucketValue``).
///
/// Only the engine's task writes it. The file is created (or emptied) when the group starts; a
/// resumed run writes the outputs of the elements it takes back from the journal again, so the
/// file is whole after a resume.
final class FlowGroupOutputFile {
    let path: String
    private let stream: UnsafeMutablePointer<FILE>
    private let encoder = JSONEncoder()
    /// The first write that failed: the group fails with it.
    private(set) var failure: String?

    private struct Line: Encodable {
        var index: Int
        var output: FlowRunReport.BucketValue
    }

    /// Creates or empties `path`.
    ///
    /// - Throws: ``FlowError/inputData(_:)`` naming the file when it cannot be created.
    init(path: String) throws {
        guard let stream = fopen(path, "w") else {
            throw FlowError.inputData("cannot write the group's output file \(path): \(String(cString: strerror(errno)))")
        }
        self.path = path
        self.stream = stream
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    }

    deinit {
        fclose(stream)
    }

    /// Writes element `index`'s output.
    func write(_ output: Any, at index: Int) {
        guard failure == nil else { return }
        do {
            var data = try encoder.encode(Line(index: index, output: FlowRunReport.BucketValue(any: output)))
            data.append(UInt8(ascii: "\n"))
            let written = data.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, stream) }
            if written != data.count { failure = "cannot write the group's output file \(path): \(String(cString: strerror(errno)))" }
        } catch {
            failure = "cannot encode element \(index)'s output for \(path): \(error)"
        }
    }

    /// Writes what is buffered; the failure, if writing failed.
    func finish() -> String? {
        if fflush(stream) != 0, failure == nil {
            failure = "cannot write the group's output file \(path): \(String(cString: strerror(errno)))"
        }
        return failure
    }
}
