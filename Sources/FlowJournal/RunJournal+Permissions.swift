import Foundation

/// A journal holds the flow, its starting bucket (`--set` values such as an `Authorization`
/// header's token) and every result: it is its owner's alone, as key files are. Folders it makes
/// are 0700 and the journal file 0600; SQLite gives the `-wal` and `-shm` files it makes beside
/// it the journal file's permissions.
extension RunJournal {
    /// Makes the folders of `path` that are missing, each 0700; the default journal folder
    /// (``defaultFolder(environment:)``), which an earlier Flow made 0755, is made 0700 too.
    ///
    /// - Throws: ``RunJournalError`` naming the folder when one cannot be made.
    static func makePrivateFolder(of path: String) throws(RunJournalError) {
        let folder = (path as NSString).deletingLastPathComponent
        guard !folder.isEmpty else { return }
        var made = folder.hasPrefix("/") ? "" : "."
        for component in folder.split(separator: "/") {
            made += "/" + component
            if mkdir(made, 0o700) != 0 && errno != EEXIST {
                throw RunJournalError(path: path, "cannot make its folder \(made): \(String(cString: strerror(errno)))")
            }
        }
        if (folder as NSString).standardizingPath == (defaultFolder() as NSString).standardizingPath { _ = chmod(folder, 0o700) }
    }

    /// Creates the journal file empty, 0600 whatever the umask, failing when a file is there.
    static func makePrivateFile(at path: String) throws(RunJournalError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let reason = errno == EEXIST ? "a file is already there; a journal is never overwritten (give another --journal)"
                : "cannot create it: \(String(cString: strerror(errno)))"
            throw RunJournalError(path: path, reason)
        }
        _ = fchmod(descriptor, 0o600)
        close(descriptor)
    }
}
