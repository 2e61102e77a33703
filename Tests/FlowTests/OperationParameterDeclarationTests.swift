import Foundation
import Testing

@testable import Flow
import FlowStandardOps

/// Ops declare their `with:` keys, and a flow file giving one an unknown key is refused when it is
/// loaded, with the key's place and what the user likely meant.
@Suite struct OperationParameterDeclarationTests {
    /// The diagnostics loading `text` as `f.yaml` gives with the stock ops' declarations (op names
    /// not checked); empty when it loads.
    private func diagnostics(_ text: String, declarations: FlowOperationRegistry = .standard) -> [String] {
        do {
            _ = try FlowFileLoader(parameterDeclarations: declarations).load(text: text, file: "f.yaml")
            return []
        } catch {
            return error.diagnostics.map(\.description)
        }
    }

    @Test func aCloseMisspellingIsRefusedAtItsPlaceWithTheKeyMeant() {
        let text = """
            flow: x
            steps:
              - op: ListFilesOp
                with:
                  path: /data
                  exclud: ["*.tmp"]
            """
        #expect(diagnostics(text) == ["f.yaml:6:7: unknown parameter 'exclud' for ListFilesOp; did you mean 'exclude'?"])
        // The stock registry as the loader's own registry checks the same.
        #expect(throws: FlowFileError.self) { try FlowFileLoader(registry: .standard).load(text: text, file: "f.yaml") }
    }

    @Test func aStepKeyUnderWithSaysWhereItBelongs() {
        #expect(diagnostics("flow: x\nsteps:\n  - op: ShellOp\n    with: {command: [true], retry: {attempts: 3}}\n") == [
            "f.yaml:4:29: 'retry' is a step key, not a parameter of ShellOp: put it beside 'op:', not under 'with:'",
        ])
        #expect(diagnostics("flow: x\nsteps:\n  - op: ListFilesOp\n    with: {path: /data, retrys: 3}\n") == [
            "f.yaml:4:25: unknown parameter 'retrys' for ListFilesOp; did you mean 'retry'? it is a step key: put it beside 'op:', not under 'with:'",
        ])
        let group = """
            flow: x
            steps:
              - group:
                  op: UploadFileOp
                  input: files
                  output: urls
                  with:
                    url: http://h/up
                    retrys: 3
                    maxConcurrent: 8
            """
        #expect(diagnostics(group) == [
            "f.yaml:9:9: unknown parameter 'retrys' for UploadFileOp; did you mean 'retry'? it is a group key: put it beside 'op:' in 'group:', not under 'with:'",
            "f.yaml:10:9: 'maxConcurrent' is a group key, not a parameter of UploadFileOp: put it beside 'op:' in 'group:', not under 'with:'",
        ])
    }

    @Test func aKeyNothingIsCloseToListsTheKeysTheOpTakes() {
        #expect(diagnostics("flow: x\nsteps:\n  - op: SleepOp\n    with: {seconds: 2}\n") == [
            "f.yaml:4:12: unknown parameter 'seconds' for SleepOp: SleepOp takes 'ms'",
        ])
        #expect(diagnostics("flow: x\nsteps:\n  - group: {op: HashFileOp, input: files, output: sums, with: {algorithm: md5}}\n") == [
            "f.yaml:3:64: unknown parameter 'algorithm' for HashFileOp: HashFileOp takes no parameters",
        ])
        // `x-` keys are not annotations: notes go in comments, and the op never sees them.
        #expect(diagnostics("flow: x\nsteps:\n  - op: SleepOp\n    with: {ms: 5, x-note: why}\n") == [
            "f.yaml:4:19: unknown parameter 'x-note' for SleepOp: SleepOp takes 'ms'; write notes as YAML comments (# ...)",
        ])
    }

    @Test func anUndeclaredCredentialSaysWhereCredentialsGoWithoutItsValue() {
        let lines = diagnostics("flow: x\nsteps:\n  - op: UploadFileOp\n    with: {url: s3://b/, secretAccessKey: wJalrXUtnFEMIK7MDENG}\n")
        #expect(lines == [
            "f.yaml:4:26: unknown parameter 'secretAccessKey' for UploadFileOp: credentials are read on the machine that runs the op "
                + "(its environment or files), never from a flow file, which the journal keeps: remove it",
        ])
    }

    @Test func everyUnknownKeyIsReportedInOnePassBesideOtherProblems() {
        let text = """
            flow: x
            steps:
              - op: SimplePrintOp
                with: {mesage: hi}
              - op: SleepOp
                with: {ms: 5, msec: 3}
                retry: {attempts: 0}
            """
        #expect(diagnostics(text) == [
            "f.yaml:4:12: unknown parameter 'mesage' for SimplePrintOp; did you mean 'message'?",
            "f.yaml:6:19: unknown parameter 'msec' for SleepOp: SleepOp takes 'ms'",
            "f.yaml:7:23: attempts must be an integer from 1 to 1000 (every try, the first included), found the integer 0",
        ])
    }

    @Test func anOpWithoutDeclarationsTakesAnyKey() throws {
        var registry = FlowOperationRegistry()
        registry.register("Mine") { _ in FlowOperation() }
        registry.register("Bare", parameters: []) { _ in FlowOperation() }
        let text = "flow: x\nsteps:\n  - op: Mine\n    with: {anything: 1, x-y: [2]}\n"
        _ = try FlowFileLoader(registry: registry).load(text: text, file: "f.yaml")
        #expect(registry.entry(named: "Mine")?.parameters == nil)
        #expect(registry.entry(named: "Mine")?.accepts(parameter: "anything") == true)
        #expect(registry.entry(named: "Bare")?.accepts(parameter: "anything") == false)
        #expect(diagnostics("flow: x\nsteps:\n  - op: Bare\n    with: {a: 1}\n", declarations: registry) == [
            "f.yaml:4:12: unknown parameter 'a' for Bare: Bare takes no parameters",
        ])
        // An op the declarations do not know (a remote worker's own) is not checked.
        #expect(diagnostics("flow: x\nsteps:\n  - op: ResizeOp\n    with: {widht: 3}\n").isEmpty)
        // Nor is anything without declarations to check against.
        _ = try FlowFileLoader().load(text: "flow: x\nsteps:\n  - op: SleepOp\n    with: {seconds: 2}\n", file: "f.yaml")
    }

    @Test func declarationsSurviveAMerge() {
        var registry = FlowOperationRegistry()
        registry.register("Mine") { _ in FlowOperation() }
        registry.merge(.standard)
        #expect(registry.entry(named: "SleepOp")?.parameters?.map(\.name) == ["ms"])
        #expect(diagnostics("flow: x\nsteps:\n  - op: SleepOp\n    with: {s: 1}\n", declarations: registry).count == 1)
    }

    @Test func onlyWrittenKeysCountNotTemplatedValues() {
        let text = """
            flow: x
            bucket: {folder: /data, exclud: oops}
            steps:
              - op: ListFilesOp
                with: {path: "${folder}", exclude: "${exclud}", output: "${exclud}"}
            """
        #expect(diagnostics(text).isEmpty)
    }

    @Test func everyStockOpTakesEveryKeyItDeclares() {
        for name in FlowOperationRegistry.standard.names {
            let declared = FlowOperationRegistry.standard.entry(named: name)?.parameters
            #expect(declared != nil, "\(name) declares its parameters")
            let keys = (declared ?? []).map { "\($0.name): 1" }.joined(separator: ", ")
            #expect(diagnostics("flow: x\nsteps:\n  - op: \(name)\n    with: {\(keys)}\n").isEmpty, "\(name)")
            #expect(Set((declared ?? []).map(\.name)).count == (declared ?? []).count, "\(name) declares each key once")
        }
        let listed = Set(FlowOperationRegistry.standard.entry(named: "ListFilesOp")?.parameters?.map(\.name) ?? [])
        #expect(listed.isSuperset(of: ["recursive", "include", "exclude", "minSize", "maxSize", "newerThan", "followLinks"]))
        #expect(FlowOperationRegistry.standard.entry(named: "UploadFileOp")?.accepts(parameter: "checksum") == true)
    }

    private static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func everyExampleLoadsWithTheStockDeclarations() throws {
        let examples = Self.repositoryRoot.appendingPathComponent("examples")
        let files = try #require(FileManager.default.enumerator(atPath: examples.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".json") }
        #expect(files.count >= 7, "\(files)")
        for file in files {
            let path = examples.appendingPathComponent(file).path
            #expect(throws: Never.self, "\(file)") {
                try FlowFileLoader(parameterDeclarations: .standard).load(contentsOf: path)
            }
        }
    }

    /// Each stock op's source files, by path under Sources/FlowStandardOps; the registrations
    /// file's reads belong to the `register("NAME"` above them.
    private static let sourceOwners: [(prefix: String, operation: String)] = [
        ("Files/HashFileOp.swift", "HashFileOp"), ("Files/", "ListFilesOp"), ("S3/ListObjectsOp.swift", "ListObjectsOp"), ("Upload/", "UploadFileOp"),
        ("S3/", "UploadFileOp"), ("Shell/", "ShellOp"), ("Timing/", "SleepOp"), ("Verify/", "VerifyObjectOp"),
    ]

    @Test func everyKeyAStockOpReadsIsDeclared() throws {
        let sources = Self.repositoryRoot.appendingPathComponent("Sources/FlowStandardOps")
        let files = try #require(FileManager.default.enumerator(atPath: sources.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") }
        let read = try NSRegularExpression(pattern: #"parameters(?:\.values)?(?:\.\w+\(|\[)\s*"([A-Za-z_][A-Za-z0-9_]*)""#)
        let registration = try NSRegularExpression(pattern: #"register\(\s*"(\w+)""#)
        var checked = 0
        for file in files {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            let whole = NSRange(text.startIndex..., in: text)
            let registrations = registration.matches(in: text, range: whole)
            for match in read.matches(in: text, range: whole) {
                let key = String(text[Range(match.range(at: 1), in: text)!])
                let owner = Self.sourceOwners.first { file.hasPrefix($0.prefix) }?.operation
                    ?? registrations.last { $0.range.location < match.range.location }.map { String(text[Range($0.range(at: 1), in: text)!]) }
                guard let owner else {
                    Issue.record("\(file) reads parameter '\(key)': add the file to sourceOwners with the op it belongs to")
                    continue
                }
                let declared = FlowOperationRegistry.standard.entry(named: owner)?.accepts(parameter: key) ?? false
                #expect(declared, "\(file): \(owner) reads '\(key)' but does not declare it in FlowOperationRegistry+Standard.swift")
                checked += 1
            }
        }
        #expect(checked >= 20, "the reads were found (\(checked))")
    }
}
