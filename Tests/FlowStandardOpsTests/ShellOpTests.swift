import Flow
import FlowStandardOps
import FlowTestSupport
import Foundation
import Testing

@Suite("ShellOp")
struct ShellOpTests {
    @Test func standardOutputBecomesTheOutputLessOneNewline() async throws {
        let flow = await runFlow(steps: [step("ShellOp", ["command": ["printf", "hello\\n\\n"]])])

        #expect(flow.isSuccess, "\(flow.errorText)")
        #expect(flow.dataBucket["output"] as? String == "hello\n")
    }

    @Test func nonZeroExitFailsWithTheStatusAndTheStderrTail() async throws {
        let script = "for i in $(seq 1 30); do echo \"err line $i\" >&2; done; echo out; exit 3"
        let flow = await runFlow(steps: [step("ShellOp", ["command": .string(script), "shell": true])])

        #expect(!flow.isSuccess)
        #expect(flow.errorText.contains("exited with status 3"), "\(flow.errorText)")
        #expect(flow.errorText.contains("err line 30"))
        #expect(flow.errorText.contains("err line 11"))
        #expect(!flow.errorText.contains("err line 10\n"))
        #expect(flow.lines.contains { $0.hasPrefix("[ShellOp]") && $0.hasSuffix("exited with status 3") })
        #expect(flow.lines.contains("[ShellOp] stderr: err line 30"))
        #expect(!flow.lines.contains("[ShellOp] stderr: err line 10"))
        #expect(flow.dataBucket["output"] == nil)
    }

    @Test(arguments: [false, true])
    func timeLimitKillsTheProgramAndEveryChildOfIt(viaShell: Bool) async throws {
        let seconds = viaShell ? "31.25" : "31.5"
        let command: FlowValue = viaShell ? .string("sleep \(seconds); echo never") : ["sleep", .string(seconds)]

        let flow = await runFlow(steps: [step("ShellOp", ["command": command, "shell": .bool(viaShell), "timeout": 1])])

        #expect(!flow.isSuccess)
        #expect(flow.errorText.contains("time limit of 1 s exceeded"), "\(flow.errorText)")
        // The limit ended it: the program would have finished and printed "never" in 31 s. (No
        // upper bound on the time: the suite shares two cores, and a loaded run took 15 s.)
        #expect(flow.dataBucket["output"] == nil)
        #expect(flow.lines.contains { $0.contains("time limit of 1 s exceeded") && !$0.contains("DidFinish") })
        await expectEnded(["sleep", seconds])
    }

    @Test func programIgnoringSIGTERMIsKilledTwoSecondsLater() async throws {
        let started = Date()
        let flow = await runFlow(steps: [step("ShellOp", ["command": "trap '' TERM; sleep 31.75", "shell": true, "timeout": 0.5])])

        let elapsed = Date().timeIntervalSince(started)
        #expect(flow.errorText.contains("time limit of 0.5 s exceeded"), "\(flow.errorText)")
        // At least the 2 s grace after SIGTERM; that it was killed, not left, is checked below.
        #expect(elapsed >= 2.0, "took \(elapsed) s")
        await expectEnded(["sleep", "31.75"])
    }

    @Test func whatTheProgramLeavesInTheBackgroundNeitherHoldsTheOpNorOutlivesIt() async throws {
        let result = try await runOperation("ShellOp", ["command": "sleep 32.5 & echo started $!", "shell": true, "timeout": 20])

        #expect(result.state == .successfully, "\(result.state)")
        let output = try #require(result.bucket["output"] as? String)
        let pid = try #require(output.hasPrefix("started ") ? Int32(output.dropFirst(8)) : nil, "\(output)")
        // Killed before the op returned; a SIGKILL takes a moment to land on a busy machine, so
        // the test waits for its exit (a pidfd) and fails if it has not come within 30 s.
        let survivors = await ProcessTable.waitUntilGone([pid], timeout: 30)
        #expect(survivors.isEmpty, "sleep 32.5 (pid \(pid)) is still running")
    }

    @Test func programThatClosesItsOutputEarlyRunsToItsEnd() async throws {
        let folder = try TemporaryDirectory()
        let marker = folder.file("marker")
        let result = try await runOperation(
            "ShellOp", ["command": .string("exec >/dev/null 2>&1; sleep 0.3; echo done > '\(marker.path)'"), "shell": true])

        #expect(result.state == .successfully, "\(result.state)")
        #expect(try String(contentsOf: marker, encoding: .utf8) == "done\n")
    }

    @Test func cancellingTheFlowEndsTheProgramAndWhatItStarted() async throws {
        let folder = try TemporaryDirectory()
        let pipe = try NamedPipe(in: folder)
        // The program says the pids of both sleeps once they run, so the cancel reaches a live
        // process group and the test knows which processes must end.
        let command = "sleep 333.25 & first=$!; sleep 333.5 & second=$!; echo \"$first $second\" > '\(pipe.path)'; wait; echo never"
        let flow = Flow(definition: FlowDefinition(name: "cancelled-shell", steps: [
            step("ShellOp", ["command": .string(command), "shell": true]),
        ]), registry: .standard)
        let started = Date()
        flow.start()
        let announced = try await pipe.firstLine(within: .seconds(60))
        let pids = try #require(announced, "the program never started").split(separator: " ").compactMap { Int32($0) }
        #expect(pids.count == 2, "\(announced ?? "")")
        flow.cancel()
        await flow.waitUntilFinished()

        #expect(!flow.isSuccess)
        // Ended, not waited for: the program alone runs 333.5 s. (Not a speed bound: a loaded run
        // of the suite took 36 s here.)
        #expect(Date().timeIntervalSince(started) < 120)
        // The op ends at once; the SIGTERM sent on cancelling takes a moment to land on a busy
        // machine, so the test waits for both exits (pidfds) and fails if they have not come in 30 s.
        let survivors = await ProcessTable.waitUntilGone(pids, timeout: 30)
        #expect(survivors.isEmpty, "still running after the cancel: \(survivors) of \(pids) (sleep 333.25, sleep 333.5)")
    }

    @Test func largeOutputIsTakenWholeAndOnlyTheStderrTailIsKept() async throws {
        // 4 MiB on stdout, 200,000 numbered lines (about 1.3 MB) on stderr, then a failure.
        let script = "head -c 4194304 /dev/zero | tr '\\0' x; seq 1 200000 >&2; exit 1"
        let result = try await runOperation("ShellOp", ["command": .string(script), "shell": true])

        guard case .withError(let text) = result.state else {
            Issue.record("expected a failure, got \(result.state)")
            return
        }
        #expect(text.contains("exited with status 1"), "\(text)")
        #expect(text.hasSuffix("\n200000"), "\(text.suffix(100))")
        #expect(text.contains("\n199981\n"))
        #expect(!text.contains("\n199980\n"))

        let output = try await runOperation("ShellOp", ["command": "head -c 4194304 /dev/zero | tr '\\0' x", "shell": true])
        let text4 = try #require(output.bucket["output"] as? String)
        #expect(text4.utf8.count == 4_194_304)
        #expect(text4.utf8.allSatisfy { $0 == UInt8(ascii: "x") })
    }

    @Test func stepTimeLimitStopsTheProgramAndCountsAsTransient() async throws {
        let flow = await runFlow(steps: [
            .operation(FlowOperationStep(op: "ShellOp", parameters: ["command": ["sleep", "33.75"]],
                                         retry: FlowRetryPolicy(attempts: 2, delay: .milliseconds(10)), timeout: .milliseconds(300))),
        ])

        #expect(!flow.isSuccess)
        #expect(flow.lines.contains { $0.contains("attempt 1 of 2 failed") && $0.contains("time limit") }, "\(flow.lines)")
        await expectEnded(["sleep", "33.75"])
    }

    @Test func shellModeRunsAStringWithEnvironmentFromTheBucket() async throws {
        let flow = await runFlow(bucket: ["name": "world"], steps: [
            step("ShellOp", ["command": "echo \"hello $GREETING, $((2 + 3))\"", "shell": true, "env": ["GREETING": "${name}"]]),
        ])

        #expect(flow.isSuccess, "\(flow.errorText)")
        #expect(flow.dataBucket["output"] as? String == "hello world, 5")
    }

    @Test func groupAppendsEachElementAsTheLastArgument() async throws {
        let flow = await runFlow(bucket: ["words": ["a b", "c", 7]], steps: [
            group("ShellOp", input: "words", output: "echoed", maxConcurrent: 2, ["command": ["echo", "got"]]),
            group("ShellOp", input: "words", output: "quoted", ["command": "printf '<%s>' \"$1\"", "shell": true]),
        ])

        #expect(flow.isSuccess, "\(flow.errorText)")
        #expect(flow.dataBucket["echoed"] as? [String] == ["got a b", "got c", "got 7"])
        #expect(flow.dataBucket["quoted"] as? [String] == ["<a b>", "<c>", "<7>"])
    }

    @Test func workingDirectoryIsWhereTheProgramStarts() async throws {
        let folder = try TemporaryDirectory()
        let result = try await runOperation("ShellOp", ["command": ["pwd"], "workingDirectory": .string(folder.path)])

        #expect(result.state == .successfully, "\(result.state)")
        let printed = try #require(result.bucket["output"] as? String)
        #expect(URL(fileURLWithPath: printed).resolvingSymlinksInPath() == folder.url.resolvingSymlinksInPath())
    }

    @Test func unknownProgramFailsNamingIt() async throws {
        let result = try await runOperation("ShellOp", ["command": [.string("no-such-program-\(UUID().uuidString.prefix(8))")]])

        guard case .withError(let text) = result.state else {
            Issue.record("expected a failure, got \(result.state)")
            return
        }
        #expect(text.hasPrefix("cannot find program no-such-program-"), "\(text)")
    }

    @Test func badParametersAreRejectedByTheFactory() throws {
        let registry = FlowOperationRegistry.standard
        #expect(throws: FlowParameterError.self) { try registry.makeOperation(named: "ShellOp", parameters: [:]) }
        #expect(throws: FlowParameterError.self) { try registry.makeOperation(named: "ShellOp", parameters: ["command": "echo hi"]) }
        #expect(throws: FlowParameterError.self) { try registry.makeOperation(named: "ShellOp", parameters: ["command": []]) }
        #expect(throws: FlowParameterError.self) {
            try registry.makeOperation(named: "ShellOp", parameters: ["command": ["echo"], "timeout": -1])
        }
        #expect(throws: FlowParameterError.self) {
            try registry.makeOperation(named: "ShellOp", parameters: ["command": ["echo"], "env": ["A": ["nested"]]])
        }
    }
}

/// Processes (not zombies) whose argv is exactly `arguments`, found through /proc.
/// Expects no process running `arguments` to be left, once the signal sent to it has landed: the
/// op returns when its program (a shell) has ended, and a child it killed may not have been
/// scheduled to die yet on a loaded machine (a `sleep` was once seen alive at that moment). Each
/// such process is waited for on a pidfd, 20 s at most: less than what is left of the tests'
/// 31 s sleeps, so a process the op failed to kill is still running at the deadline.
func expectEnded(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async {
    let living = livingProcesses(withArguments: arguments)
    let survivors = await ProcessTable.waitUntilGone(living, timeout: 20)
    #expect(survivors.isEmpty, "\(arguments.joined(separator: " ")) is still running (pid \(survivors))", sourceLocation: sourceLocation)
}

func livingProcesses(withArguments arguments: [String]) -> [Int32] {
    let wanted = Data((arguments.joined(separator: "\0") + "\0").utf8)
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry in
        guard let pid = Int32(entry),
              let commandLine = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"), commandLine == wanted,
              let status = try? String(contentsOfFile: "/proc/\(entry)/status", encoding: .utf8),
              !status.contains("State:\tZ")
        else { return nil }
        return pid
    }
}
