import Foundation

/// Names the calling thread as the kernel shows it (`top -H`, `perf`, `/proc/PID/task/TID/comm`):
/// Foundation's `Thread.name` does not reach it on Linux, where every thread of ours showed as
/// Swift's `root.default-qos`.
enum ThreadName {
    /// Sets the calling thread's name, cut to the kernel's 15 bytes; best effort.
    static func set(_ name: String) {
        #if os(Linux)
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        #endif
    }
}
