import ArgumentParser
import FlowCluster
import Foundation
import ZeroMQ

/// `keygen FILE`, in both programs: makes a CURVE key pair and prints its public key.
struct KeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Make a CURVE key pair in FILE (mode 0600, never overwritten) and print its public key.",
        discussion: """
            Give the public key to the other side: a worker's goes in the coordinator's --authorized-keys \
            file, the coordinator's is each worker's --coordinator-key.
            """
    )

    @Argument(help: ArgumentHelp("Where to write the key pair.", valueName: "FILE"))
    var file: String

    func run() throws {
        do {
            let pair = try CurveKeyFile.generate(at: file)
            print(pair.publicKey)
        } catch {
            CommandLineLogging.printError(error.description)
            throw ExitCode(2)
        }
    }
}

/// Reading the key files the options name, with errors that say which option.
enum CurveOptions {
    /// The path an option gives, or else the environment variable's.
    static func path(_ option: String?, environment name: String) -> String? {
        if let option { return option }
        if let value = ProcessInfo.processInfo.environment[name], !value.isEmpty { return value }
        return nil
    }

    /// Whether `endpoint` is reachable only from this machine: `ipc://`, `inproc://`, or TCP on a
    /// loopback address.
    static func isLocal(_ endpoint: String) -> Bool {
        if endpoint.hasPrefix("ipc://") || endpoint.hasPrefix("inproc://") { return true }
        // `tcp://eth0;192.168.1.2:5555` binds from a source: the host is the part after `;`.
        guard let host = WorkerEndpoint.host(of: endpoint) else { return false }
        return host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}
