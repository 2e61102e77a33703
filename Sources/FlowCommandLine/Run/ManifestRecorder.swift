import Flow
import FlowStandardOps
import Foundation
import Synchronization

/// `run --manifest FILE` and the `Uploads: sent N, skipped: M (…)` line, made as the run goes:
/// each finished op's `manifest {…}` lines (``UploadManifestEntry``, `UploadFileOp`'s own, never
/// another op's) are counted and, with `--manifest`, appended to a file next to FILE, renamed to
/// FILE when the run ends. Nothing is kept per upload: a run of ten million uploads writes its
/// manifest and counts its skips in the memory of one, with the summary condensed.
final class ManifestRecorder: Sendable {
    private struct State {
        var sent = 0
        /// Skips by reason, and the reasons in the order first seen.
        var skipped: [String: Int] = [:]
        var reasons: [String] = []
        var pending = Data()
        var file: FileHandle?
        /// The first write that failed: the manifest is then given up, and this said at the end.
        var failure: String?
    }

    /// Where the manifest goes in the end; `nil` without `--manifest`.
    let path: String?
    private let partial: String?
    private let state: Mutex<State>

    /// Flushed to the file each time this much waits.
    static let chunk = 1 << 20

    init(path: String?) {
        self.path = path
        var state = State()
        if let path {
            let partial = path + ".partial"
            self.partial = partial
            if FileManager.default.createFile(atPath: partial, contents: nil) {
                state.file = FileHandle(forWritingAtPath: partial)
            }
            if state.file == nil { state.failure = "cannot create \(partial)" }
        } else {
            partial = nil
        }
        self.state = Mutex(state)
    }

    /// Takes a finished op's manifest lines (replayed ones of a resumed run too: they come as
    /// the same events).
    func record(_ event: FlowProgressEvent) {
        let record: FlowOperationRecord
        switch event {
        case .operationFinished(let finished): record = finished
        case .groupElementFinished(let finished, _, _, _): record = finished
        default: return
        }
        let entries = record.logLines.compactMap { UploadManifestEntry.recorded(by: record.operationName, line: $0.text) }
        guard !entries.isEmpty else { return }
        state.withLock { state in
            for entry in entries {
                if let reason = entry.skipped {
                    if state.skipped[reason] == nil { state.reasons.append(reason) }
                    state.skipped[reason, default: 0] += 1
                } else {
                    state.sent += 1
                }
                guard state.file != nil else { continue }
                state.pending.append(contentsOf: entry.json.utf8)
                state.pending.append(0x0A)
            }
            if state.pending.count >= Self.chunk { Self.flush(&state) }
        }
    }

    private static func flush(_ state: inout State) {
        guard let file = state.file, !state.pending.isEmpty else { return }
        do {
            try file.write(contentsOf: state.pending)
        } catch {
            state.failure = error.localizedDescription
            try? file.close()
            state.file = nil
        }
        state.pending.removeAll(keepingCapacity: true)
    }

    /// `Uploads: sent N, skipped: M (same modtime)` (several reasons: `skipped: 3 (2 same size, 1
    /// same modtime)`), `nil` when nothing was skipped.
    var tally: String? {
        state.withLock { state in
            let skipped = state.skipped.values.reduce(0, +)
            guard skipped > 0 else { return nil }
            let why = state.reasons.count == 1 ? state.reasons[0]
                : state.reasons.map { "\(state.skipped[$0] ?? 0) \($0)" }.joined(separator: ", ")
            return "Uploads: sent \(state.sent), skipped: \(skipped) (\(why))"
        }
    }

    /// Writes what waits and puts the manifest in its place; a manifest that could not be
    /// written is reported, not fatal.
    func finish() {
        guard let path, let partial else { return }
        let failure: String? = state.withLock { state in
            Self.flush(&state)
            try? state.file?.close()
            state.file = nil
            return state.failure
        }
        if let failure {
            CommandLineLogging.printError("cannot write the manifest to \(path): \(failure)")
            unlink(partial)
            return
        }
        if rename(partial, path) != 0 {
            CommandLineLogging.printError("cannot write the manifest to \(path): \(String(cString: strerror(errno)))")
            unlink(partial)
        }
    }
}
