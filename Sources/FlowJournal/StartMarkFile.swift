#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The journal's notes of how far each step's elements may have started, appended to a file of
/// their own next to the journal (`<journal>-started`), one `write(2)` each.
///
/// A note has to be on disk before its task leaves, so it sits on every serial step's path. As a
/// row in the SQLite file it cost about 50 µs a step (a commit, with its locks and WAL frames:
/// serial round trip 0.22–0.24 ms with it, 0.17–0.19 ms appended here, same sitting); appended it
/// costs one system call. It survives the coordinator's crash as a WAL commit does (it is in the page cache
/// the moment `write` returns), and a resume folds it into the journal's `started` table. A line
/// cut short by a crash has no newline and is skipped: its element had not left yet.
///
/// Line format: the index, a tab, the step's path with `%`, tab and newline percent-encoded, and a
/// newline.
final class StartMarkFile: Sendable {
    // Written with O_APPEND, one `write` per note, from any thread.
    private let descriptor: Int32

    /// The notes file of the journal at `journal`.
    static func path(forJournal journal: String) -> String { journal + "-started" }

    /// Opens (creating it, or emptying it with `truncating`) the notes file of the journal at
    /// `journal`; `nil` when it cannot be opened (the journal then writes its notes as rows).
    init?(journal: String, truncating: Bool = false) {
        let flags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | (truncating ? O_TRUNC : 0)
        let opened = open(Self.path(forJournal: journal), flags, 0o600)
        guard opened >= 0 else { return nil }
        descriptor = opened
    }

    deinit {
        close(descriptor)
    }

    /// Appends that `step`'s elements may have started through `index`; false when the write
    /// failed or was short.
    func append(step: String, through index: Int) -> Bool {
        var line = Array("\(index)\t\(Self.escape(step))\n".utf8)
        let count = line.count
        let written = line.withUnsafeMutableBytes { write(descriptor, $0.baseAddress, count) }
        return written == count
    }

    /// The notes in the file of the journal at `journal`: per step, the highest index. Empty when
    /// there is no file; malformed lines and a last line without its newline are skipped.
    static func read(journal: String) -> [String: Int] {
        // A line at a time: a run of 100 million elements leaves about 400,000 notes, whose
        // lines split at once (an array of slices) held 16 MB at the run's end.
        guard let file = fopen(path(forJournal: journal), "r") else { return [:] }
        defer { fclose(file) }
        var marks: [String: Int] = [:]
        var buffer: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(buffer) }
        while true {
            let length = getline(&buffer, &capacity, file)
            guard length > 0, let buffer else { return marks }
            // A last line without its newline is one a crash cut short.
            guard buffer[length - 1] == 0x0A else { return marks }
            let line = UnsafeRawBufferPointer(start: buffer, count: length - 1)
            guard let tab = line.firstIndex(of: UInt8(ascii: "\t")),
                  let index = Int(String(decoding: line[..<tab], as: UTF8.self)), index >= 0,
                  let step = unescape(String(decoding: line[(tab + 1)...], as: UTF8.self)) else { continue }
            marks[step] = max(marks[step] ?? index, index)
        }
    }

    /// Removes the notes file of the journal at `journal`, if any.
    static func remove(journal: String) {
        unlink(path(forJournal: journal))
    }

    static func escape(_ step: String) -> String {
        step.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\t", with: "%09")
            .replacingOccurrences(of: "\n", with: "%0A")
    }

    static func unescape(_ text: String) -> String? {
        text.removingPercentEncoding
    }
}
