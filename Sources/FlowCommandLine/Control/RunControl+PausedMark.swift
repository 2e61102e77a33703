import Foundation

/// The mark a paused run leaves beside its journal (`J.paused`), so that a run resumed after its
/// coordinator stopped starts paused again. It holds the run's id and is its owner's alone: a
/// mark found beside a new run's journal, or naming another run (anyone can leave a file in
/// `/tmp`), is not honoured, or it would hold the run paused for good.
extension RunControl {
    /// Whether the mark at `path` pauses the run `runID`: only on a resume, only when the file is
    /// a regular file of this account that names this run.
    static func pausedMark(at path: String, names runID: String, resuming: Bool) -> Bool {
        guard resuming else { return false }
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(), info.st_size <= 256,
              let text = try? String(contentsOfFile: path, encoding: .utf8) else { return false }
        return text.trimmingCharacters(in: .whitespacesAndNewlines) == runID
    }

    /// Leaves the mark for `runID` at `path`, 0600 (replacing what was there).
    static func writePausedMark(at path: String, runID: String) {
        unlink(path)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let line = Array((runID + "\n").utf8)
        _ = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }
}

extension RunControl {
    /// Throws the reason a run's control socket at `path` cannot be reached from this account:
    /// none there, or another account's (its folder or the socket is its owner's alone, 0700 and
    /// 0600). Without this check a request to another user's run waited out its time-out and
    /// said the run "may have stopped".
    static func checkReachable(_ path: String) throws {
        var info = stat()
        if stat(path, &info) != 0 {
            guard errno == EACCES else {
                throw RunControlError("no run is going on with that id here (no control socket at \(path)); flow-coordinator runs lists the runs")
            }
            throw RunControlError("permission denied: the run's control socket \(path) is in a folder of another account; "
                                  + "steer the run as the user that started it (or root)")
        }
        if access(path, R_OK | W_OK) != 0 && errno == EACCES {
            let owner = getpwuid(info.st_uid).map { String(cString: $0.pointee.pw_name) } ?? "uid \(info.st_uid)"
            throw RunControlError("permission denied: the run's control socket \(path) belongs to \(owner); "
                                  + "steer the run as that user (or root)")
        }
    }
}
