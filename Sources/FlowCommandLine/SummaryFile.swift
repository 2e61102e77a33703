import Flow
import Foundation

/// The whole summary written to a file line by line while the run goes, from the flow's summary
/// stream, so a run of a million elements never holds it in memory. It is written under a
/// temporary name next to its place and renamed there when the run ends, so a reader never sees
/// half a summary under the real name.
final class SummaryFile: @unchecked Sendable {
    /// Where the summary ends up.
    let path: String
    private let temporaryPath: String
    private var file: UnsafeMutablePointer<FILE>?
    private var writeError: Int32 = 0
    private let formatter = FlowSummary.timeFormatter()
    private var stampSecond = Int.min
    private var stamp = ""

    /// Opens the temporary file and writes the summary's first line.
    ///
    /// - Throws: ``SummaryFileError`` when the file cannot be made.
    init(path: String) throws {
        self.path = path
        let url = URL(fileURLWithPath: path)
        temporaryPath = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).partial").path
        guard let file = fopen(temporaryPath, "w") else { throw SummaryFileError(path: path, code: errno) }
        self.file = file
        put(FlowSummary.header)
    }

    deinit { discard() }

    /// Appends one line. Called by the flow, one line at a time.
    func write(_ entry: FlowLogEntry) {
        // The time stamp has whole seconds: one formatting per second, not per line.
        let second = Int(entry.time.timeIntervalSince1970.rounded(.down))
        if second != stampSecond {
            stampSecond = second
            // The whole second, as `FlowSummary.lineText` writes it: a time a hair before the
            // next second must not read as the next one here and this one there.
            stamp = formatter.string(from: Date(timeIntervalSince1970: Double(second)))
        }
        put(stamp)
        put(" ")
        put(entry.text)
        put("\n")
    }

    /// Writes the closing lines and puts the file in its place.
    ///
    /// - Throws: ``SummaryFileError`` when a write failed (a full disk) or the rename did.
    func finish(isSuccess: Bool) throws {
        put(FlowSummary.footer(isSuccess: isSuccess))
        guard let file else { return }
        self.file = nil
        if fclose(file) != 0, writeError == 0 { writeError = errno }
        if writeError != 0 {
            unlink(temporaryPath)
            throw SummaryFileError(path: path, code: writeError)
        }
        if rename(temporaryPath, path) != 0 {
            let code = errno
            unlink(temporaryPath)
            throw SummaryFileError(path: path, code: code)
        }
    }

    /// Drops the temporary file (a run that never started).
    func discard() {
        guard let file else { return }
        self.file = nil
        fclose(file)
        unlink(temporaryPath)
    }

    /// Copies the finished file to standard output.
    func copyToStandardOutput() throws {
        guard let input = fopen(path, "r") else { throw SummaryFileError(path: path, code: errno) }
        defer { fclose(input) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        fflush(nil)
        while true {
            let count = fread(&buffer, 1, buffer.count, input)
            if count == 0 { break }
            var written = 0
            while written < count {
                let result = buffer.withUnsafeBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress! + written, count - written) }
                if result < 0, errno == EINTR { continue }
                // A closed pipe (`| head`) ends the copy, not the run.
                guard result > 0 else { return }
                written += result
            }
        }
    }

    private func put(_ text: String) {
        guard let file, writeError == 0 else { return }
        var text = text
        text.withUTF8 { bytes in
            if bytes.count > 0, fwrite(bytes.baseAddress, 1, bytes.count, file) != bytes.count { writeError = errno }
        }
    }
}

/// A summary file that could not be written.
struct SummaryFileError: Error, CustomStringConvertible {
    var path: String
    var code: Int32

    var description: String {
        "cannot write the summary to \(path): \(String(cString: strerror(code)))"
    }
}
