import Flow
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The `ipc://` endpoint an embedded run binds for its own workers: a socket file named
/// `flow-PID-RANDOM.sock`, in `$XDG_RUNTIME_DIR` when set (the user's own folder, emptied at
/// logout), else in `$TMPDIR` or `/tmp`.
///
/// A run removes its socket file when it ends, but a run killed with SIGKILL cannot: each new
/// embedded run therefore first removes the socket files there whose process is gone.
enum PrivateEndpoint {
    /// The socket files' names: `flow-PID-RANDOM.sock`.
    static let prefix = "flow-"
    static let suffix = ".sock"

    /// A fresh endpoint, after removing the socket files of runs that are gone from its folder.
    static func make(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let directory = folder(environment: environment)
        removeStale(in: directory)
        let name = "\(prefix)\(getpid())-\(UInt32.random(in: 0...UInt32.max))\(suffix)"
        return "ipc://" + URL(fileURLWithPath: directory).appendingPathComponent(name).path
    }

    /// Where the socket files go: `$XDG_RUNTIME_DIR`, `$TMPDIR` or `/tmp` (absolute: ZeroMQ
    /// resolves a relative path against the working directory).
    static func folder(environment: [String: String]) -> String {
        for name in ["XDG_RUNTIME_DIR", "TMPDIR"] {
            if let value = environment[name], value.hasPrefix("/") { return value }
        }
        return "/tmp"
    }

    /// Removes the socket file of an `ipc://` endpoint.
    static func remove(_ endpoint: String?) {
        guard let endpoint, endpoint.hasPrefix("ipc://") else { return }
        unlink(String(endpoint.dropFirst("ipc://".count)))
    }

    /// Removes the `flow-PID-*.sock` sockets in `directory` whose process has ended (a zombie has:
    /// ``LocalProcess/hasEnded(_:)``). A
    /// process that exists but is not ours (EPERM) keeps its file, and so does anything that is not
    /// a socket.
    static func removeStale(in directory: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names {
            guard let pid = processIdentifier(inName: name), pid != getpid() else { continue }
            guard LocalProcess.hasEnded(pid) else { continue }
            let path = URL(fileURLWithPath: directory).appendingPathComponent(name).path
            var status = stat()
            guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else { continue }
            unlink(path)
        }
    }

    /// The PID in `flow-PID-RANDOM.sock`, `nil` for another name.
    static func processIdentifier(inName name: String) -> pid_t? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        let parts = name.dropFirst(prefix.count).dropLast(suffix.count).split(separator: "-")
        guard parts.count == 2, UInt32(parts[1]) != nil, let pid = pid_t(parts[0]), pid > 0 else { return nil }
        return pid
    }
}
