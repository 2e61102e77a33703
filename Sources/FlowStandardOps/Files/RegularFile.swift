#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opening a file that an op reads from start to end: a regular file, or a link to one.
///
/// Anything else is refused with an error that says what the path is, before a byte is read:
/// opening a named pipe for reading waits until some program opens it for writing, which could be
/// never (a worker's thread stuck in `open`, its slot busy for good), and a device such as
/// `/dev/zero` has a size of 0 and would be uploaded as an empty file.
enum RegularFile {
    /// Opens `path` for reading.
    ///
    /// - Returns: the descriptor (the caller closes it) and the file's size when it was opened.
    /// - Throws: ``FlowStandardOpError/Code/unreadableFile`` naming the path when it is missing,
    ///   unreadable or not a regular file (`cannot read /data/in: it is a named pipe, not a file`).
    static func openForReading(_ path: String) throws(FlowStandardOpError) -> (descriptor: Int32, size: Int64) {
        // Non-blocking, so that a named pipe is opened at once (and then refused) instead of
        // waiting for a writer; reads from a regular file do not block either way.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else { throw failure(path, errno) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let code = errno
            close(descriptor)
            throw failure(path, code)
        }
        let kind = status.st_mode & S_IFMT
        guard kind == S_IFREG else {
            close(descriptor)
            throw FlowStandardOpError(.unreadableFile, "cannot read \(path): \(describe(kind))")
        }
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0 { _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) }
        return (descriptor, Int64(status.st_size))
    }

    /// What a path that is not a regular file is, for the error.
    static func describe(_ kind: mode_t) -> String {
        switch kind {
        case S_IFDIR: return "it is a folder"
        case S_IFIFO: return "it is a named pipe, not a file"
        case S_IFCHR: return "it is a character device, not a file"
        case S_IFBLK: return "it is a block device, not a file"
        case S_IFSOCK: return "it is a socket, not a file"
        default: return "it is not a regular file"
        }
    }

    /// The error for a failed system call on `path`.
    static func failure(_ path: String, _ code: Int32) -> FlowStandardOpError {
        FlowStandardOpError(.unreadableFile, "cannot read \(path): \(String(cString: strerror(code)))")
    }
}
