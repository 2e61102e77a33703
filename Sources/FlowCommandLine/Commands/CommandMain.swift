public import ArgumentParser
import Flow
import Foundation

/// Runs a Flow program's root command and exits with the Flow exit codes: 0 success, 1 the flow
/// failed, 2 usage or flow-file error (ArgumentParser would say 64), 3 cluster error.
///
/// Before it exits it waits (up to 15 s) for ops' cleanups still running (``FlowPendingWork``),
/// such as aborting the multipart upload of a cancelled S3 upload.
public enum CommandMain {
    /// Parses the arguments, runs the command, and exits.
    public static func run<Command: AsyncParsableCommand>(_ type: Command.Type, arguments: [String]? = nil) async -> Never {
        exit(await status(of: type, arguments: arguments))
    }

    /// Parses the arguments, runs the command, and returns the exit status ``run(_:arguments:)``
    /// exits with (its messages printed).
    static func status<Command: AsyncParsableCommand>(of type: Command.Type, arguments: [String]? = nil) async -> Int32 {
        do {
            var command = try type.parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            await FlowPendingWork.finish(within: .seconds(15))
            return 0
        } catch {
            await FlowPendingWork.finish(within: .seconds(15))
            let code = type.exitCode(for: error)
            let message = type.fullMessage(for: error)
            if code == .success {
                print(message)
                return 0
            }
            if !message.isEmpty { FileHandle.standardError.write(Data((message + "\n").utf8)) }
            return code == .validationFailure ? 2 : code.rawValue
        }
    }
}
