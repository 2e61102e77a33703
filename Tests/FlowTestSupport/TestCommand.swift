import Foundation

/// Runs a command-line tool to completion, for checks made with standard tools (`sha256sum`).
public enum TestCommand {
    /// What the tool did.
    public struct Result: Sendable {
        /// Its exit status.
        public let status: Int32
        /// Its standard output.
        public let output: String
    }

    /// Runs `arguments[0]` (looked up through `/usr/bin/env`) and waits for it.
    ///
    /// - Throws: when it cannot be started.
    public static func run(_ arguments: [String]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    /// The SHA-256 of a file by `sha256sum`, as lowercase hex.
    public static func sha256sum(_ path: String) throws -> String {
        let result = try run(["sha256sum", path])
        guard result.status == 0, let digest = result.output.split(separator: " ").first else {
            throw TestSupportError("sha256sum \(path) failed with status \(result.status)")
        }
        return String(digest)
    }
}
