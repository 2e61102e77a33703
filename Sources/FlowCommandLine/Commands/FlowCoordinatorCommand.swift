public import ArgumentParser
import Flow

/// `flow-coordinator`: runs flow files on a cluster of flow-workers.
public struct FlowCoordinatorCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "flow-coordinator",
        abstract: "Run flow files on a cluster of flow-workers.",
        discussion: """
            Exit codes: 0 the flow succeeded; 1 the flow ran and failed; 2 usage or flow-file error, nothing \
            ran; 3 cluster error (cannot bind or connect, no worker offers an op in time).
            """,
        version: FlowVersion.current,
        subcommands: [RunCommand.self, ResumeCommand.self, RunsCommand.self, ValidateCommand.self, ShowCommand.self, KeygenCommand.self,
                      PoolCommand.self, StatusCommand.self, PauseCommand.self, ContinueCommand.self, CancelCommand.self, LimitCommand.self, VerifyCommand.self]
    )

    public init() {}
}
