import FlowCommandLine

await CommandMain.run(FlowCoordinatorCommand.self)
