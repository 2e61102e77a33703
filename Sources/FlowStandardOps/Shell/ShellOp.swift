public import Flow
import Foundation

/// Runs a program and takes its standard output.
///
/// - Primary input `input`: when present (a string, number, or array of them), appended as the
///   last argument(s), so a group of `ShellOp` runs the program once per array element. With
///   `shell: true` it becomes `$1` (and on) of the script. A map (an element of `ListObjectsOp`'s
///   or `ListFilesOp`'s list) is passed as its JSON text, keys sorted: `jq -r .key <<<"$1"`.
/// - Primary output `output`: the program's standard output, less one trailing newline.
///
/// Parameters:
/// - `command` (list of strings, required): argv; the program is looked up in `PATH` unless it
///   contains a `/`. With `shell: true` it may be a single string (a list is joined with spaces).
/// - `shell` (bool, default false): run `command` with `/bin/sh -c`. A `${key}` in such a command
///   is never pasted into the script: the value reaches the shell as the environment variable
///   `FLOW_VAR_key`, referenced quoted where the `${key}` stood, so it is one word of text
///   whatever it holds (`$(…)`, `;`, quotes). Write `$${NAME}` for the shell's own variables.
/// - `env` (map of strings, optional): added to the worker's environment; values may reference
///   bucket values (`"${key}"`), resolved before the op is built.
/// - `timeout` (seconds, default 60): past it the program's process group gets SIGTERM, then
///   SIGKILL 2 s later, and the op fails with `time limit of N s exceeded`.
/// - `workingDirectory` (string, optional): where the program starts.
///
/// The program also gets `FLOW_ATTEMPT`: which try of the op this is (`FlowOperation.attempt`),
/// more than 1 when an earlier try may have done part of the work, so a script can make itself
/// safe to run twice.
///
/// A non-zero exit (or death by a signal) fails the op; its error and log give the status and the
/// last 20 lines of standard error. Standard input is `/dev/null`. The program is always waited
/// for and reaped, also when the flow is cancelled.
// @unchecked: restated, as Swift 6 asks of FlowOperation's subclasses; no state of its own beyond `let`s.
public final class ShellOp: FlowAsyncOperation, @unchecked Sendable {
    /// Lines of standard error a failure reports.
    static let errorTailLines = 20

    /// The argv, or the script's words with ``usesShell``.
    public let command: [String]
    /// Whether `command` is a `/bin/sh -c` script.
    public let usesShell: Bool
    /// Variables added to the inherited environment.
    public let environment: [String: String]
    /// Seconds before the program is killed.
    public let timeout: Duration
    /// Where the program starts, or `nil` for the current directory.
    public let workingDirectory: String?

    /// Creates the op.
    ///
    /// - Parameters:
    ///   - command: argv, or a script's words when `shell` is true.
    ///   - shell: whether to run `command` with `/bin/sh -c`.
    ///   - environment: variables added to the inherited environment.
    ///   - timeout: how long before the program is killed.
    ///   - workingDirectory: where the program starts.
    public init(command: [String], shell: Bool = false, environment: [String: String] = [:], timeout: Duration = .seconds(60),
                workingDirectory: String? = nil) {
        self.command = command
        self.usesShell = shell
        self.environment = environment
        self.timeout = timeout
        self.workingDirectory = workingDirectory
    }

    /// Builds the op from `with:` parameters.
    ///
    /// - Throws: `FlowParameterError` when `command` is missing, empty, or a string without
    ///   `shell: true`, or another parameter has the wrong type.
    public convenience init(parameters: FlowParameters) throws {
        let shell = try parameters.bool("shell", default: false)
        let command: [String]
        if shell, case .string(let script)? = parameters["command"] {
            command = [script]
        } else if case .string? = parameters["command"] {
            throw parameters.error("command", "must be a list of strings (argv); set shell: true to run a single string with /bin/sh -c")
        } else {
            guard let list = try parameters.stringList("command") else { throw parameters.error("command", "is required") }
            command = list
        }
        guard !command.isEmpty, !command[0].isEmpty else { throw parameters.error("command", "must not be empty") }
        self.init(
            command: command, shell: shell, environment: try parameters.stringMap("env"),
            timeout: try parameters.seconds("timeout", default: 60), workingDirectory: try parameters.optionalString("workingDirectory"))
    }

    public override var primaryInputParamKey: String { "input" }
    public override var primaryOutputParamKey: String { "output" }

    public override func run() async throws {
        let argv = (usesShell ? ["/bin/sh", "-c", command.joined(separator: " "), "sh"] : command) + (try inputArguments())
        var childEnvironment = ProcessInfo.processInfo.environment
        childEnvironment.merge(environment) { _, added in added }
        childEnvironment["FLOW_ATTEMPT"] = String(attempt)
        let display = Self.display(usesShell ? [command.joined(separator: " ")] : command)
        let started = Date()
        do {
            let executable = try Self.executable(argv[0], searchPath: childEnvironment["PATH"])
            let directory = try workingDirectory.map(Self.directory)
            let outcome = try await ShellProcess(
                executable: executable, arguments: Array(argv.dropFirst()), environment: childEnvironment,
                workingDirectory: directory, timeLimit: timeout.seconds
            ).run()
            try Task.checkCancellation()
            try check(outcome, display: display)
            var text = String(decoding: outcome.standardOutput, as: UTF8.self)
            if text.hasSuffix("\n") { text.removeLast() }
            log(message: "ran \(display) in \(DurationText.elapsed(since: started)) s")
            set(primaryOutputParamKey, text)
        } catch let error as FlowStandardOpError {
            if error.code != .nonZeroExit && error.code != .timeLimitExceeded { log(message: error.message) }
            throw error
        }
    }

    /// Fails on a time limit, a non-zero status or a signal, logging the stderr tail.
    private func check(_ outcome: ShellProcess.Outcome, display: String) throws {
        let what: String
        let code: FlowStandardOpError.Code
        if outcome.timedOut {
            (what, code) = ("\(display) was killed: time limit of \(DurationText.limit(timeout.seconds)) s exceeded", .timeLimitExceeded)
        } else {
            switch outcome.termination {
            case .exit(0): return
            case .exit(let status): (what, code) = ("\(display) exited with status \(status)", .nonZeroExit)
            case .signal(let number): (what, code) = ("\(display) was killed by signal \(number)", .nonZeroExit)
            }
        }
        let tail = Self.lastLines(of: outcome.standardErrorTail, count: Self.errorTailLines)
        log(message: what)
        for line in tail { log(message: "stderr: " + line) }
        throw FlowStandardOpError(code, tail.isEmpty ? what : what + "; stderr:\n" + tail.joined(separator: "\n"))
    }

    /// The primary input as arguments: none when absent.
    private func inputArguments() throws -> [String] {
        guard let input = try optionalValue(primaryInputParamKey, as: Any.self), !(input is NSNull) else { return [] }
        let items = (input as? [Any]) ?? [input]
        return try items.map { item in
            switch item {
            case let text as String: return text
            case let number as Int: return String(number)
            case let number as Double: return String(number)
            case let flag as Bool: return String(flag)
            case let map as [String: Any] where JSONSerialization.isValidJSONObject(map):
                // A listing's element (ListObjectsOp's, ListFilesOp's): its JSON text, for `jq`.
                let data = try JSONSerialization.data(withJSONObject: map, options: [.sortedKeys, .withoutEscapingSlashes])
                return String(decoding: data, as: UTF8.self)
            default:
                throw FlowDataError.mismatchInputDataType(
                    "<\(primaryInputParamKey)> in data bucket is <\(input)> with type <\(type(of: input))>, "
                        + "but NOT a string, a number, a map of JSON values, or an array of them")
            }
        }
    }

    /// The program's path: as given when it contains a `/`, else the first executable in `PATH`.
    static func executable(_ program: String, searchPath: String?) throws -> URL {
        if program.contains("/") { return URL(fileURLWithPath: program) }
        let path = searchPath ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":", omittingEmptySubsequences: true) {
            let candidate = folder + "/" + program
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isFolder), !isFolder.boolValue,
               FileManager.default.isExecutableFile(atPath: candidate) {
                return URL(fileURLWithPath: String(candidate))
            }
        }
        throw FlowStandardOpError(.launchFailed, "cannot find program \(program) in PATH (\(path))")
    }

    private static func directory(_ path: String) throws -> URL {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else {
            throw FlowStandardOpError(.launchFailed, "working directory \(path) does not exist or is not a folder")
        }
        return URL(fileURLWithPath: path)
    }

    /// The command as the log shows it, shortened past 200 characters.
    static func display(_ words: [String]) -> String {
        let text = words.map { $0.contains(" ") || $0.isEmpty ? "'\($0)'" : $0 }.joined(separator: " ")
        return "`" + (text.count > 200 ? text.prefix(200) + "…" : text) + "`"
    }

    static func lastLines(of data: Data, count: Int) -> [String] {
        let lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
        return Array(lines.suffix(count))
    }
}

extension ShellOp: FlowRemoteOperation {
    public var remoteParameters: [String: FlowValue] {
        var parameters: [String: FlowValue] = [
            "command": .array(command.map(FlowValue.string)), "shell": .bool(usesShell),
            "env": .map(environment.mapValues(FlowValue.string)), "timeout": .double(timeout.seconds),
        ]
        if let workingDirectory { parameters["workingDirectory"] = .string(workingDirectory) }
        return parameters
    }
}
