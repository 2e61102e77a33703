import Foundation
import Logging

/// Logging and messages on stderr for the Flow programs.
enum CommandLineLogging {
    static func logger(label: String, level: String) -> Logger {
        var logger = Logger(label: label) { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = Logger.Level(rawValue: level) ?? .info
        return logger
    }

    static func printError(_ text: String) {
        FileHandle.standardError.write(Data(("error: " + text + "\n").utf8))
    }

    static func printDiagnostic(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

