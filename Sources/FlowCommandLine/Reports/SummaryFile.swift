import Flow
import Foundation
import Synchronization

/// The whole summary written to a file line by line while the run goes, from the flow's summary
/// stream, so a run of a million elements never holds it in memory. It is written under a
/// temporary name next to its place and renamed there when the run ends, so a reader never sees
/// half a summary under the real name.
final class SummaryFile: Sendable {
    /// Where the summary ends up.
    let path: String
    private let temporaryPath: String
    /// The open file and what writing it needs; the flow calls ``write(_:)`` under its own lock,
    /// one line at a time, and the run ends it from another thread.
    private let state: Mutex<State>

    private struct State {
        var file: UnsafeMutablePointer<FILE>?
        var writeError: Int32 = 0
        let formatter = FlowSummary.timeFormatter()
        var stampSecond = Int.min
        var stamp = ""

        mutating func put(_ text: String) {
            guard let file, writeError == 0 else { return }
            var text = text
            text.withUTF8 { bytes in
                if bytes.count > 0, fwrite(bytes.baseAddress, 1, bytes.count, file) != bytes.count { writeError = errno }
            }
        }
    }

    /// Opens the temporary file and writes the summary's first line.
    ///
    /// - Throws: ``SummaryFileError`` when the file cannot be made.
    init(path: String) throws {
        self.path = path
        let url = URL(fileURLWithPath: path)
        let temporaryPath = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).partial").path
        self.temporaryPath = temporaryPath
        guard let file = fopen(temporaryPath, "w") else { throw SummaryFileError(path: path, code: errno) }
        var state = State(file: file)
        state.put(FlowSummary.header)
        self.state = Mutex(state)
    }

    deinit { discard() }

    /// Appends one line. Called by the flow, one line at a time.
    func write(_ entry: FlowLogEntry) {
        state.withLock { state in
            // The time stamp has whole seconds: one formatting per second, not per line.
            let second = Int(entry.time.timeIntervalSince1970.rounded(.down))
            if second != state.stampSecond {
                state.stampSecond = second
                // The whole second, as `FlowSummary.lineText` writes it: a time a hair before the
                // next second must not read as the next one here and this one there.
                state.stamp = state.formatter.string(from: Date(timeIntervalSince1970: Double(second)))
            }
            state.put(state.stamp)
            state.put(" ")
            state.put(entry.text)
            state.put("\n")
        }
    }

    /// Writes the closing lines and puts the file in its place.
    ///
    /// - Throws: ``SummaryFileError`` when a write failed (a full disk) or the rename did.
    func finish(isSuccess: Bool) throws {
        let (closed, writeError) = state.withLock { state -> (Bool, Int32) in
            state.put(FlowSummary.footer(isSuccess: isSuccess))
            guard let file = state.file else { return (false, 0) }
            state.file = nil
            if fclose(file) != 0, state.writeError == 0 { state.writeError = errno }
            return (true, state.writeError)
        }
        guard closed else { return }
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
        let file = state.withLock { state -> UnsafeMutablePointer<FILE>? in
            defer { state.file = nil }
            return state.file
        }
        guard let file else { return }
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
}

/// A summary file that could not be written.
struct SummaryFileError: Error, CustomStringConvertible {
    var path: String
    var code: Int32

    var description: String {
        "cannot write the summary to \(path): \(String(cString: strerror(code)))"
    }
}
