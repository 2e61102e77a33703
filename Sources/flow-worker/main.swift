import FlowCommandLine

await CommandMain.run(FlowWorkerCommand.self)
