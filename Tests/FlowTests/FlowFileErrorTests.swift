import Foundation
import Testing

@testable import Flow

/// One bad flow file and every diagnostic it must produce, in order.
struct FlowFileErrorCase: Sendable, CustomTestStringConvertible {
    let name: String
    let text: String
    let expected: [String]

    init(_ name: String, _ text: String, _ expected: [String]) {
        self.name = name
        self.text = text
        self.expected = expected
    }

    var testDescription: String { name }
}

/// The diagnostics loading `text` as `f.yaml` gives; empty when it loads.
private func diagnostics(_ text: String, registry: FlowOperationRegistry? = nil) -> [String] {
    do {
        _ = try FlowFileLoader(registry: registry).load(text: text, file: "f.yaml")
        return []
    } catch {
        return error.diagnostics.map(\.description)
    }
}

private let documentErrors: [FlowFileErrorCase] = [
    .init("empty file", "", ["f.yaml:1:1: the file is empty: a flow file needs 'flow:' and 'steps:'"]),
    .init("only comments", "# nothing yet\n", ["f.yaml:1:1: the file is empty: a flow file needs 'flow:' and 'steps:'"]),
    .init("top level is a list", "- op: A\n", ["f.yaml:1:1: a flow file must be a map with 'flow' and 'steps', found a list"]),
    .init("top level is text", "hello\n", ["f.yaml:1:1: a flow file must be a map with 'flow' and 'steps', found the text 'hello'"]),
    .init("unknown top-level key close to a known one", "flow: x\nstepz:\n  - op: A\n", [
        "f.yaml:1:1: flow file has no steps: add 'steps:' with a list of steps",
        "f.yaml:2:1: unknown key 'stepz'; did you mean 'steps'?",
    ]),
    .init("unknown top-level key far from any", "flow: x\ncolor: red\nsteps: [{op: A}]\n", [
        "f.yaml:2:1: unknown key 'color'; expected one of 'flow', 'bucket', 'defaults', 'steps'",
    ]),
    .init("missing flow", "steps:\n  - op: A\n", ["f.yaml:1:1: flow file has no name: add 'flow: <name>'"]),
    .init("flow is a list", "flow: [a, b]\nsteps: [{op: A}]\n", ["f.yaml:1:7: flow must be text (the flow's name), found a list"]),
    .init("flow is a number", "flow: 12\nsteps: [{op: A}]\n", [
        "f.yaml:1:7: flow must be text (the flow's name), found the integer 12: quote it as \"12\" to use it as text",
    ]),
    .init("bucket is a list", "flow: x\nbucket: [1]\nsteps: [{op: A}]\n", [
        "f.yaml:2:9: bucket must be a map of initial values by key, found a list",
    ]),
    .init("steps is a map", "flow: x\nsteps: {op: A}\n", ["f.yaml:2:8: steps must be a list of steps, found a map"]),
    .init("steps is empty", "flow: x\nsteps: []\n", ["f.yaml:2:8: steps is empty: add at least one step"]),
]

private let stepErrors: [FlowFileErrorCase] = [
    .init("step is text", "flow: x\nsteps:\n  - SimplePrintOp\n", [
        "f.yaml:3:5: a step must be a map with one of 'op', 'group' or 'cases', found the text 'SimplePrintOp': write '- op: SimplePrintOp' to run an op",
    ]),
    .init("step has no kind", "flow: x\nsteps:\n  - with: {a: 1}\n", [
        "f.yaml:3:5: step has none of 'op', 'group' or 'cases': add one to say what the step does",
    ]),
    .init("step has three kinds", "flow: x\nsteps:\n  - op: A\n    group: {op: B, input: i, output: o}\n    cases: {key: k, branches: {A: []}}\n", [
        "f.yaml:3:5: step has 'op', 'group' and 'cases': a step has exactly one of 'op', 'group' or 'cases'; split it into separate steps",
    ]),
    .init("step has two kinds", "flow: x\nsteps:\n  - op: A\n    cases: {key: k, branches: {a: []}}\n", [
        "f.yaml:3:5: step has 'op' and 'cases': a step has exactly one of 'op', 'group' or 'cases'; split it into separate steps",
    ]),
    .init("unknown key in step", "flow: x\nsteps:\n  - op: A\n    whith: {a: 1}\n", [
        "f.yaml:4:5: unknown key 'whith' in step; did you mean 'with'?",
    ]),
    .init("op is a list", "flow: x\nsteps:\n  - op: [A]\n", ["f.yaml:3:9: op must be text (a registered op name), found a list"]),
    .init("with is a list", "flow: x\nsteps:\n  - op: A\n    with: [1, 2]\n", [
        "f.yaml:4:11: with must be a map of the op's parameters, found a list",
    ]),
    .init("with on a group step", "flow: x\nsteps:\n  - group: {op: A, input: i, output: o}\n    with: {a: 1}\n", [
        "f.yaml:4:5: 'with' belongs to 'op' steps: for a group, move it inside 'group'",
    ]),
    .init("with on a cases step", "flow: x\nsteps:\n  - cases: {key: k, branches: {A: []}}\n    with: {a: 1}\n", [
        "f.yaml:4:5: 'with' belongs to 'op' steps: a cases step takes no parameters",
    ]),
    .init("map key that is not text", "flow: x\nsteps:\n  - op: A\n    with: {[a]: 1}\n", [
        "f.yaml:4:12: a map key must be text, found a list",
    ]),
    .init("integer too big", "flow: x\nbucket:\n  big: 99999999999999999999\nsteps: [{op: A}]\n", [
        "f.yaml:3:8: '99999999999999999999' is not an integer that fits in 64 bits: quote it to keep it as text",
    ]),
    .init("unsupported tag", "flow: x\nbucket:\n  odd: !point 1,2\nsteps: [{op: A}]\n", [
        "f.yaml:3:8: unsupported tag '!point': remove it, or quote the value to keep it as text",
    ]),
]

private let groupErrors: [FlowFileErrorCase] = [
    .init("group is text", "flow: x\nsteps:\n  - group: UploadOp\n", [
        "f.yaml:3:12: group must be a map with 'op', 'input' and 'output', found the text 'UploadOp'",
    ]),
    .init("group misspells input", "flow: x\nsteps:\n  - group:\n      op: A\n      inputt: images\n      output: out\n", [
        "f.yaml:3:5: group has no input: add 'input: <bucket key of the array>' or 'input: {file: <path>}'",
        "f.yaml:5:7: unknown key 'inputt' in group; did you mean 'input'?",
    ]),
    // Without output a group collects nothing: only the op is missing.
    .init("group without op and output", "flow: x\nsteps:\n  - group: {input: images}\n", [
        "f.yaml:3:5: group has no op: add 'op: <registered op name>'",
    ]),
    .init("group fields of wrong types", """
        flow: x
        steps:
          - group:
              op: [A]
              input: {a: 1}
              output: 7
              maxConcurrent: 0
              allowFailure: maybe
              with: [1]
        """, [
        "f.yaml:4:11: op must be text (a registered op name), found a list",
        "f.yaml:5:14: input as a map reads a file: add 'file: <path of a JSON lines, lines or CSV file>'",
        "f.yaml:5:15: unknown key 'a' in input; expected one of 'file', 'format', 'columns'",
        "f.yaml:6:15: output must be text (the bucket key to collect the results at, or {file: PATH}), found the integer 7: quote it as \"7\" to use it as text",
        "f.yaml:7:22: maxConcurrent must be an integer from 1 to 100000, found the integer 0",
        "f.yaml:8:21: allowFailure must be true or false, found the text 'maybe'",
        "f.yaml:9:13: with must be a map of parameters for every op in the group, found a list",
    ]),
    .init("maxConcurrent is a fraction", "flow: x\nsteps:\n  - group: {op: A, input: i, output: o, maxConcurrent: 2.5}\n", [
        "f.yaml:3:56: maxConcurrent must be an integer from 1 to 100000, found the number 2.5",
    ]),
    .init("empty input", "flow: x\nsteps:\n  - group: {op: A, input: '', output: o}\n", [
        "f.yaml:3:27: input is empty: give the bucket key of the input array, or {file: PATH}",
    ]),
]

private let casesErrors: [FlowFileErrorCase] = [
    .init("cases misspells branches and has a list key", "flow: x\nsteps:\n  - cases:\n      key: [k]\n      brances: {}\n", [
        "f.yaml:3:5: cases has no branches: add 'branches:' mapping each case value to a list of steps",
        "f.yaml:4:12: key must be text (the bucket key whose value picks the branch), found a list",
        "f.yaml:5:7: unknown key 'brances' in cases; did you mean 'branches'?",
    ]),
    .init("cases without key", "flow: x\nsteps:\n  - cases: {branches: {A: []}}\n", [
        "f.yaml:3:5: cases has no key: add 'key: <bucket key to compare>'",
    ]),
    .init("branches is a list", "flow: x\nsteps:\n  - cases: {key: k, branches: [A]}\n", [
        "f.yaml:3:31: branches must be a map from case value to a list of steps, found a list",
    ]),
    .init("branches is empty", "flow: x\nsteps:\n  - cases: {key: k, branches: {}}\n", [
        "f.yaml:3:31: branches is empty: add at least one 'VALUE: [steps]'",
    ]),
    .init("branch is a map", "flow: x\nsteps:\n  - cases:\n      key: k\n      branches:\n        A: {op: X}\n", [
        "f.yaml:6:12: branch 'A' must be a list of steps, found a map: use [] for none",
    ]),
    .init("branch 1 and '1' are the same case", "flow: x\nsteps:\n  - cases:\n      key: k\n      branches:\n        1: []\n        '1': []\n", [
        "f.yaml:7:9: branch '1' appears more than once: keep one",
    ]),
    .init("default is a map", "flow: x\nsteps:\n  - cases:\n      key: k\n      branches: {A: []}\n      default: {op: X}\n", [
        "f.yaml:6:16: default must be a list of steps, found a map: use [] for none",
    ]),
]

private let policyErrors: [FlowFileErrorCase] = [
    .init("retry without attempts", "flow: x\nsteps:\n  - op: A\n    retry: {delay: 1}\n", [
        "f.yaml:4:12: retry has no attempts: add 'attempts: <tries in all, the first included>'",
    ]),
    .init("retry attempts of zero", "flow: x\nsteps:\n  - op: A\n    retry: {attempts: 0}\n", [
        "f.yaml:4:23: attempts must be an integer from 1 to 1000 (every try, the first included), found the integer 0",
    ]),
    .init("retry is a number", "flow: x\nsteps:\n  - op: A\n    retry: 3\n", [
        "f.yaml:4:12: retry must be a map such as {attempts: 5, delay: 1, backoff: 2, maxDelay: 60, jitter: true}, found the integer 3",
    ]),
    .init("retry with a misspelt key", "flow: x\nsteps:\n  - op: A\n    retry: {attempts: 2, maxdelay: 5}\n", [
        "f.yaml:4:26: unknown key 'maxdelay' in retry; did you mean 'maxDelay'?",
    ]),
    .init("backoff below one", "flow: x\nsteps:\n  - op: A\n    retry: {attempts: 2, backoff: 0.5}\n", [
        "f.yaml:4:35: backoff must be from 1 (every wait the same) to 100, found the number 0.5",
    ]),
    .init("jitter is text", "flow: x\nsteps:\n  - op: A\n    retry: {attempts: 2, jitter: maybe}\n", [
        "f.yaml:4:34: jitter must be true or false, found the text 'maybe'",
    ]),
    .init("negative delay", "flow: x\nsteps:\n  - op: A\n    retry: {attempts: 2, delay: -1}\n", [
        "f.yaml:4:33: delay must be a number of seconds of at least 0 (at most a year), found the integer -1",
    ]),
    .init("on is not a map", "flow: x\nsteps:\n  - op: A\n    on: recorder\n", [
        "f.yaml:4:9: on must be a map of the labels a worker must have, found the text 'recorder': write on: {KEY: VALUE}, e.g. "
            + "on: {role: recorder}, to run the step only on workers started with --label role=recorder",
    ]),
    .init("on with a bad key and a list value", "flow: x\nsteps:\n  - group: {op: A, input: i, on: {-bad: x, role: [a]}}\n", [
        "f.yaml:3:35: on: '-bad': a label's key must be letters, digits and . _ - / (starting with a letter or a digit)",
        "f.yaml:3:44: on: each label is KEY: VALUE, both text, found the text 'role': a list: write on: {KEY: VALUE}, e.g. "
            + "on: {role: recorder}, to run the step only on workers started with --label role=recorder",
    ]),
    .init("affinityTimeout without affinity", "flow: x\nsteps:\n  - group: {op: A, input: i, affinityTimeout: 5}\n", [
        "f.yaml:3:30: affinityTimeout goes with affinity: source (how long an element waits for its host): add the affinity or remove it",
    ]),
    .init("zero timeout", "flow: x\nsteps:\n  - op: A\n    timeout: 0\n", [
        "f.yaml:4:14: timeout must be a number of seconds above 0 (at most a year), found the integer 0",
    ]),
    .init("timeout as text that is no duration", "flow: x\nsteps:\n  - op: A\n    timeout: soon\n", [
        "f.yaml:4:14: timeout must be a duration like 30m, 24h, 7d, 1h30m, 90s, 500ms or 1.5 (a bare number is seconds), found the text 'soon'",
    ]),
    .init("bad maxFailures", "flow: x\nsteps:\n  - group: {op: A, input: i, output: o, maxFailures: lots}\n", [
        "f.yaml:3:54: maxFailures must be a count of elements (an integer of at least 0) or a percentage such as \"2%\", found the text 'lots'",
    ]),
    .init("percentage over 100", "flow: x\nsteps:\n  - group: {op: A, input: i, output: o, maxFailures: \"150%\"}\n", [
        "f.yaml:3:54: maxFailures must be a count of elements (an integer of at least 0) or a percentage such as \"2%\", found the text '150%'",
    ]),
    .init("maxFailures with allowFailure", "flow: x\nsteps:\n  - group: {op: A, input: i, output: o, allowFailure: true, maxFailures: 3}\n", [
        "f.yaml:3:61: maxFailures has no effect with allowFailure: true, which lets any number fail: keep one of them",
    ]),
    .init("retry beside a group", "flow: x\nsteps:\n  - group: {op: A, input: i, output: o}\n    retry: {attempts: 2}\n", [
        "f.yaml:4:5: 'retry' belongs to 'op' steps: for a group, move it inside 'group'",
    ]),
    .init("defaults with an unknown key", "flow: x\ndefaults: {retries: 3}\nsteps: [{op: A}]\n", [
        "f.yaml:2:12: unknown key 'retries' in defaults; expected one of 'retry', 'timeout'",
    ]),
    .init("defaults with a bad timeout", "flow: x\ndefaults: {timeout: never}\nsteps: [{op: A}]\n", [
        "f.yaml:2:21: timeout must be a duration like 30m, 24h, 7d, 1h30m, 90s, 500ms or 1.5 (a bare number is seconds), found the text 'never'",
    ]),
]

private let syntaxErrors: [FlowFileErrorCase] = [
    .init("YAML key without colon", "flow: x\nsteps\n  - op: A\n", [
        "f.yaml:3:7: invalid YAML or JSON: could not find expected ':' (while scanning a simple key that starts at line 2, column 1)",
    ]),
    .init("JSON missing comma", "{\n  \"flow\": \"x\"\n  \"steps\": []\n}\n", [
        "f.yaml:3:3: invalid YAML or JSON: did not find expected ',' or '}' (while parsing a flow mapping that starts at line 1, column 1)",
    ]),
    .init("duplicate key", "flow: a\nflow: b\nsteps: [{op: A}]\n", [
        "f.yaml:1:1: key 'flow' appears more than once in this map: keep one",
    ]),
    .init("two documents", "flow: a\nsteps: [{op: A}]\n---\nflow: b\n", [
        "f.yaml:3:1: a flow file holds one document: remove the second '---' and what follows it",
    ]),
    .init("tab indent", "flow: a\nsteps:\n\t- op: A\n", [
        "f.yaml:3:1: a tab: YAML indents with spaces, not tabs; replace it with spaces",
    ]),
    .init("tab after text", "flow: a\nsteps:\n  - op: A\n    with: {message: b}\n  \t- op: B\n", [
        "f.yaml:5:3: a tab: YAML indents with spaces, not tabs; replace it with spaces",
    ]),
]

@Suite("FlowFileError")
struct FlowFileErrorTests {
    @Test(arguments: documentErrors + stepErrors + groupErrors + casesErrors + syntaxErrors + policyErrors)
    func badFileReportsEveryProblemWithItsLocation(_ errorCase: FlowFileErrorCase) {
        #expect(diagnostics(errorCase.text) == errorCase.expected)
    }

    @Test func severalErrorsAreAllReportedInFileOrder() {
        let text = """
            flow: 5
            bucket: [x]
            steps:
              - op: A
                with: 3
              - group: {op: B, input: i}
              - cases: {key: k, branches: {A: [{opp: C}]}}
            extra: 1
            """
        #expect(diagnostics(text) == [
            "f.yaml:1:7: flow must be text (the flow's name), found the integer 5: quote it as \"5\" to use it as text",
            "f.yaml:2:9: bucket must be a map of initial values by key, found a list",
            "f.yaml:5:11: with must be a map of the op's parameters, found the integer 3",
            "f.yaml:7:36: step has none of 'op', 'group' or 'cases': add one to say what the step does",
            "f.yaml:7:37: unknown key 'opp' in step; did you mean 'op'?",
            "f.yaml:8:1: unknown key 'extra'; expected one of 'flow', 'bucket', 'defaults', 'steps'",
        ])
    }

    @Test func unknownOpsAreErrorsOnlyWithARegistry() {
        var registry = FlowOperationRegistry()
        registry.register("SimplePrintOp") { _ in FlowOperation() }
        registry.register("UploadSingleImageOp") { _ in FlowOperation() }
        let text = """
            flow: x
            steps:
              - op: SimplPrintOp
              - op: Foo
              - group: {op: Bar, input: a, output: b}
              - op: SimplePrintOp
            """
        #expect(diagnostics(text, registry: registry) == [
            "f.yaml:3:9: unknown op 'SimplPrintOp'; did you mean 'SimplePrintOp'? registered ops: SimplePrintOp, UploadSingleImageOp",
            "f.yaml:4:9: unknown op 'Foo'; registered ops: SimplePrintOp, UploadSingleImageOp",
            "f.yaml:5:17: unknown op 'Bar'; registered ops: SimplePrintOp, UploadSingleImageOp",
        ])
        #expect(diagnostics(text) == [])
    }

    @Test func unknownOpWithAnEmptyRegistrySaysNoneAreRegistered() {
        #expect(diagnostics("flow: x\nsteps: [{op: A}]\n", registry: FlowOperationRegistry()) == [
            "f.yaml:2:14: unknown op 'A'; no ops are registered",
        ])
    }

    @Test func jsonErrorsHaveLinesAndColumnsToo() {
        let text = """
            {
              "flow": "x",
              "stepz": [{"op": "A"}]
            }
            """
        #expect(diagnostics(text) == [
            "f.yaml:1:1: flow file has no steps: add 'steps:' with a list of steps",
            "f.yaml:3:3: unknown key 'stepz'; did you mean 'steps'?",
        ])
    }

    @Test func descriptionPutsOneDiagnosticOnEachLine() {
        let error = FlowFileError(diagnostics: [
            .init(location: .init(file: "a.yaml", line: 2, column: 5), message: "first"),
            .init(location: .init(file: "a.yaml", line: 9, column: 1), message: "second"),
        ])
        #expect(error.description == "a.yaml:2:5: first\na.yaml:9:1: second")
    }

    @Test func unreadableFileIsReportedWithoutLineAndColumn() {
        let path = "/nonexistent-\(UUID().uuidString)/flow.yaml"
        #expect(throws: FlowFileError.self) { try FlowFileLoader().load(contentsOf: path) }
        do {
            _ = try FlowFileLoader().load(contentsOf: path)
        } catch {
            #expect(error.description == "\(path): cannot read: no such file or directory")
        }
        do {
            _ = try FlowFileLoader().loadBucket(contentsOf: path)
        } catch {
            #expect(error.description == "\(path): cannot read: no such file or directory")
        }
        let directory = FileManager.default.temporaryDirectory.path
        #expect(throws: FlowFileError.self) { try FlowFileLoader().load(contentsOf: directory) }
        do {
            _ = try FlowFileLoader().load(contentsOf: directory)
        } catch {
            #expect(error.description == "\(directory): cannot read: it is a directory, not a file")
        }
    }

    @Test func bucketFileThatIsNotAMapIsAnError() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bucket-\(UUID().uuidString).yaml").path
        try "- a\n- b\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: FlowFileError.self) { try FlowFileLoader().loadBucket(contentsOf: path) }
        do {
            _ = try FlowFileLoader().loadBucket(contentsOf: path)
        } catch {
            #expect(error.description == "\(path):1:1: a bucket file must be a map of values by key, found a list")
        }
    }

    @Test func aliasBombIsRefusedInsteadOfExpanded() {
        // Ten levels of ten aliases each would be 10^10 values.
        var lines = ["flow: x", "bucket:", "  l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
        for level in 1...9 {
            let previous = Array(repeating: "*l\(level - 1)", count: 10).joined(separator: ", ")
            lines.append("  l\(level): &l\(level) [\(previous)]")
        }
        lines.append("steps: [{op: A}]")
        #expect(diagnostics(lines.joined(separator: "\n")) == [
            "f.yaml:3:39: the file expands to more than 1000000 values beyond what it writes out, through aliases ('*name') "
                + "of values such as this one: alias them fewer times, or write the file out smaller",
        ])
    }

    @Test func aliasesOfALongTextAreRefusedPastTheByteLimit() throws {
        // 70 copies of a 1 MiB text are few values but 70 MiB, past 64 MiB beyond the file's own.
        let long = String(repeating: "x", count: 1 << 20)
        func flow(copies: Int, asKeys: Bool = false) -> String {
            let uses = asKeys
                ? (0..<copies).map { _ in "    - *big : 1" }.joined(separator: "\n")
                : (0..<copies).map { _ in "    - *big" }.joined(separator: "\n")
            return "flow: x\nbucket:\n  big: &big \(long)\n  copies:\n\(uses)\nsteps: [{op: A}]"
        }
        let refusal = "f.yaml:3:8: the file expands to more than 64 MiB of text beyond what it writes out, through aliases ('*name') "
            + "of values such as this one: alias them fewer times, or write the file out smaller"
        #expect(diagnostics(flow(copies: 70)) == [refusal])
        #expect(diagnostics(flow(copies: 70, asKeys: true)) == [refusal])
        #expect(diagnostics(flow(copies: 60)) == [])

        // A --bucket YAML file is read the same way.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bomb-\(UUID().uuidString).yaml").path
        try "big: &big \(long)\ncopies: [\(Array(repeating: "*big", count: 70).joined(separator: ", "))]\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = try #require(throws: FlowFileError.self) { try FlowFileLoader().loadBucket(contentsOf: path) }
        #expect(error.diagnostics.map(\.description) == [
            "\(path):1:6: the file expands to more than 64 MiB of text beyond what it writes out, through aliases ('*name') "
                + "of values such as this one: alias them fewer times, or write the file out smaller",
        ])
    }

    @Test func nothingIsReturnedWhenAnyErrorExists() {
        // One bad value deep inside an otherwise valid file still fails the whole load.
        #expect(throws: FlowFileError.self) {
            try FlowFileLoader().load(text: "flow: x\nsteps:\n  - op: A\n    with: {n: !!binary '%%%'}\n", file: "f.yaml")
        }
    }
}
