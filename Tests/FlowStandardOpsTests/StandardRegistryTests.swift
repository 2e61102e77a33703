import Flow
import FlowStandardOps
import Testing

@Suite("FlowOperationRegistry.standard")
struct StandardRegistryTests {
    @Test func offersTheWorkingOpsBesideTheSeedDemoOps() throws {
        let registry = FlowOperationRegistry.standard
        #expect(registry.names == [
            "HashFileOp", "ListFilesOp", "ListObjectsOp", "MockAsyncLoadProfileOp", "MockAsyncLoginOp", "ShellOp", "SimplePrintOp", "SleepOp",
            "UploadFileOp", "UploadSingleImageOp", "VerifyObjectOp",
        ])
        for name in registry.names {
            #expect(registry.entry(named: name)?.summary.isEmpty == false, "\(name) has no summary")
        }
    }

    @Test func entriesKnowTheirGroupKeysWithoutParameters() throws {
        let registry = FlowOperationRegistry.standard
        let keys = ["UploadFileOp": ("file", "url"), "ShellOp": ("input", "output"), "HashFileOp": ("file", "sha256"),
                    "SleepOp": ("item", "item"), "ListFilesOp": ("", ""), "VerifyObjectOp": ("object", "check")]
        for (name, (input, output)) in keys {
            let entry = try #require(registry.entry(named: name))
            #expect(entry.primaryInputParamKey == input, "\(name)")
            #expect(entry.primaryOutputParamKey == output, "\(name)")
        }
    }

    @Test func builtOpsCarryTheirParametersToAWorker() throws {
        let registry = FlowOperationRegistry.standard
        let built = try registry.makeOperation(
            named: "UploadFileOp", parameters: ["url": "http://h/u", "method": "post", "headers": ["A": "1"], "timeout": 5])
        let remote = try #require(built as? any FlowRemoteOperation)
        let rebuilt = try #require(try registry.makeOperation(named: "UploadFileOp", parameters: remote.remoteParameters) as? UploadFileOp)
        #expect(rebuilt.method == .post)
        #expect(rebuilt.headers == ["A": "1"])
        #expect(rebuilt.timeout == .seconds(5))
        #expect(rebuilt.baseURL.absoluteString == "http://h/u")
    }

    /// A time in seconds becomes a `Duration` (which cannot hold every `Double`): past a year it
    /// is refused, naming the op and the parameter, and never traps.
    @Test(arguments: ["UploadFileOp", "ShellOp", "VerifyObjectOp"])
    func aTimeoutPastAYearIsRefusedNotATrap(op: String) throws {
        let registry = FlowOperationRegistry.standard
        var parameters: [String: FlowValue] = ["timeout": .double(1e300)]
        if op == "UploadFileOp" { parameters["url"] = .string("http://h/u") }
        if op == "ShellOp" { parameters["command"] = .array([.string("true")]) }
        let error = #expect(throws: (any Error).self) { try registry.makeOperation(named: op, parameters: parameters) }
        let text = "\(error.map { "\($0)" } ?? "")"
        #expect(text.contains("timeout") && text.contains("at most a year"), "\(text)")
        parameters["timeout"] = .integer(31_536_000)
        #expect(throws: Never.self) { try registry.makeOperation(named: op, parameters: parameters) }
    }
}
