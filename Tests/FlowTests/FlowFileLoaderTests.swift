import Foundation
import Testing

@testable import Flow

/// The sample from the flow file format, line numbers as written.
private let sampleYAML = """
    flow: upload-images            # name, required, string
    bucket:                        # initial data bucket, optional, a map of any values
      images: [a, b, c, d]
      target: A
    steps:                         # required, non-empty list
      - op: SimplePrintOp          # one op, by registered name
        with: {message: Step1}     # its parameters, optional map
      - group:                     # FlowArrayGroupDispatcher
          op: UploadSingleImageOp
          input: images            # inputKey, required
          output: imageURLs        # outputKey, required
          maxConcurrent: 3         # optional, default 3, integer >= 1
          allowFailure: false      # optional, default false
          with: {}                 # optional
      - cases:                     # FlowCase branches, then combine
          key: target              # required
          branches:                # required map: case value (string) -> list of steps
            A: [{op: SimplePrintOp, with: {message: Step2A1}}]
            B: [{op: SimplePrintOp, with: {message: Step2B1}}]
          default: []              # optional list of steps
      - op: SimplePrintOp
        with: {message: Step3}
    """

private let sampleJSON = """
    {
      "flow": "upload-images",
      "bucket": {"images": ["a", "b", "c", "d"], "target": "A"},
      "steps": [
        {"op": "SimplePrintOp", "with": {"message": "Step1"}},
        {"group": {"op": "UploadSingleImageOp", "input": "images", "output": "imageURLs",
                   "maxConcurrent": 3, "allowFailure": false, "with": {}}},
        {"cases": {"key": "target",
                   "branches": {"A": [{"op": "SimplePrintOp", "with": {"message": "Step2A1"}}],
                                "B": [{"op": "SimplePrintOp", "with": {"message": "Step2B1"}}]},
                   "default": []}},
        {"op": "SimplePrintOp", "with": {"message": "Step3"}}
      ]
    }
    """

private func printStep(_ message: String) -> FlowStep {
    .operation(FlowOperationStep(op: "SimplePrintOp", parameters: ["message": .string(message)]))
}

/// The sample as it should load, without locations.
private let expectedSample = FlowDefinition(
    name: "upload-images",
    bucket: ["images": .array([.string("a"), .string("b"), .string("c"), .string("d")]), "target": .string("A")],
    steps: [
        printStep("Step1"),
        .group(FlowGroupStep(op: "UploadSingleImageOp", input: "images", output: "imageURLs", maxConcurrent: 3, allowFailure: false)),
        .cases(FlowCasesStep(
            branches: [
                FlowCaseBranch(key: "target", value: "A", steps: [printStep("Step2A1")]),
                FlowCaseBranch(key: "target", value: "B", steps: [printStep("Step2B1")]),
            ],
            defaultSteps: [])),
        printStep("Step3"),
    ])

private func load(_ text: String, registry: FlowOperationRegistry? = nil) throws -> FlowDefinition {
    try FlowFileLoader(registry: registry).load(text: text, file: "f.yaml")
}

private func temporaryFile(_ text: String, suffix: String) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("flowfile-\(UUID().uuidString)\(suffix)").path
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

// Locations differ between YAML and JSON and are asserted on their own; whole values compare without them.
extension FlowDefinition {
    fileprivate var strippedOfLocations: FlowDefinition {
        FlowDefinition(name: name, bucket: bucket, steps: steps.map(\.strippedOfLocations))
    }
}

extension FlowStep {
    fileprivate var strippedOfLocations: FlowStep {
        switch self {
        case .operation(var step):
            step.location = nil
            return .operation(step)
        case .group(var step):
            step.location = nil
            return .group(step)
        case .cases(var step):
            step.location = nil
            step.branches = step.branches.map {
                FlowCaseBranch(key: $0.key, value: $0.value, steps: $0.steps.map(\.strippedOfLocations))
            }
            step.defaultSteps = step.defaultSteps?.map(\.strippedOfLocations)
            return .cases(step)
        }
    }
}

@Suite("FlowFileLoader")
struct FlowFileLoaderTests {
    @Test func sampleYAMLLoadsIntoTheExpectedDefinition() throws {
        let definition = try load(sampleYAML)
        #expect(definition.strippedOfLocations == expectedSample)
    }

    @Test func sampleRecordsWhereTheFlowAndEachStepWereWritten() throws {
        let definition = try load(sampleYAML)
        #expect(definition.location == FlowSourceLocation(file: "f.yaml", line: 1, column: 1))
        #expect(definition.steps.map { $0.location?.description } == ["f.yaml:6:5", "f.yaml:8:5", "f.yaml:15:5", "f.yaml:21:5"])
        guard case .cases(let cases) = definition.steps[2] else {
            Issue.record("third step is not cases: \(definition.steps[2])")
            return
        }
        #expect(cases.branches.map { $0.steps.first?.location?.description } == ["f.yaml:18:13", "f.yaml:19:13"])
    }

    @Test func jsonEquivalentLoadsTheSameDefinition() throws {
        let definition = try load(sampleJSON)
        #expect(definition.strippedOfLocations == expectedSample)
        #expect(definition.steps.first?.location == FlowSourceLocation(file: "f.yaml", line: 5, column: 5))
    }

    @Test func compactJSONWithoutSpacesLoads() throws {
        let definition = try load(#"{"flow":"x","steps":[{"op":"A","with":{"n":1,"s":"t"}}]}"#)
        #expect(definition.strippedOfLocations == FlowDefinition(
            name: "x", steps: [.operation(.init(op: "A", parameters: ["n": .integer(1), "s": .string("t")]))]))
    }

    @Test func onPlacesAStepOrAGroupOnWorkersWithEveryLabel() throws {
        let definition = try load("""
            flow: p
            steps:
              - op: ListFilesOp
                on: {role: recorder, zone: "2"}
              - group: {op: Up, input: files, output: urls, on: {host: b1}}
              - op: Done
            """)
        guard case .operation(let listing) = definition.steps[0], case .group(let group) = definition.steps[1],
              case .operation(let last) = definition.steps[2] else {
            Issue.record("unexpected steps \(definition.steps)")
            return
        }
        #expect(listing.placement?.labels == ["role": "recorder", "zone": "2"])
        #expect(group.placement?.labels == ["host": "b1"])
        #expect(last.placement == nil)
        #expect(group.placement?.matches(["host": "b1", "name": "w1"]) == true)
        #expect(listing.placement?.matches(["role": "recorder", "zone": "3"]) == false)
        #expect(listing.placement?.description == "role=recorder, zone=2")
    }

    @Test func groupDefaultsAreThreeConcurrentAndNoFailureAllowed() throws {
        let definition = try load("""
            flow: g
            steps:
              - group: {op: Up, input: images, output: urls}
              - group: {op: Up, input: images, output: urls, maxConcurrent: 10, allowFailure: true, with: {size: 2}}
            """)
        #expect(definition.steps == [
            .group(.init(op: "Up", input: "images", output: "urls", maxConcurrent: 3, allowFailure: false,
                         location: .init(file: "f.yaml", line: 3, column: 5))),
            .group(.init(op: "Up", input: "images", output: "urls", maxConcurrent: 10, allowFailure: true,
                         parameters: ["size": .integer(2)], location: .init(file: "f.yaml", line: 4, column: 5))),
        ])
    }

    @Test func casesNestInsideBranchesWithGroupsAndDefaults() throws {
        let definition = try load("""
            flow: nested
            steps:
              - cases:
                  key: region
                  branches:
                    eu:
                      - group: {op: Up, input: files, output: urls}
                      - cases:
                          key: tier
                          branches:
                            gold: [{op: Fast}]
                          default:
                            - op: Slow
                    us: []
            """)
        let inner = FlowStep.cases(.init(
            branches: [FlowCaseBranch(key: "tier", value: "gold", steps: [.operation(.init(op: "Fast"))])],
            defaultSteps: [.operation(.init(op: "Slow"))]))
        let expected = FlowDefinition(name: "nested", steps: [
            .cases(.init(branches: [
                FlowCaseBranch(key: "region", value: "eu", steps: [.group(.init(op: "Up", input: "files", output: "urls")), inner]),
                FlowCaseBranch(key: "region", value: "us", steps: []),
            ])),
        ])
        #expect(definition.strippedOfLocations == expected)
    }

    @Test func casesWithoutDefaultHaveNoDefaultSteps() throws {
        let definition = try load("flow: c\nsteps:\n  - cases: {key: k, branches: {a: [{op: A}]}}\n")
        guard case .cases(let cases) = definition.steps.first else {
            Issue.record("not a cases step: \(definition.steps)")
            return
        }
        #expect(cases.defaultSteps == nil)
    }

    @Test func branchKeysAreTheirTextAndKeepFileOrder() throws {
        let definition = try load("""
            flow: order
            steps:
              - cases:
                  key: k
                  branches:
                    zeta: []
                    1: []
                    true: []
                    alpha: []
                    ~: []
            """)
        guard case .cases(let cases) = definition.steps.first else {
            Issue.record("not a cases step: \(definition.steps)")
            return
        }
        #expect(cases.branches.map(\.value) == ["zeta", "1", "true", "alpha", "~"])
    }

    @Test func valuesTakeTheTypeTheirResolvedTagGives() throws {
        let definition = try load("""
            flow: values
            bucket:
              count: 3
              negative: -42
              hex: 0x1F
              ratio: 1.5
              exponent: 1e3
              flag: true
              off: no
              version: 1.10
              octal: 0o17
              leadingZero: 0123
              time: 12:30
              infinity: -.inf
              nothing: null
              tilde: ~
              empty:
              day: 2024-05-01
              moment: 2024-05-01T12:30:00Z
              explicitDay: !!timestamp 2024-05-01
              quotedNumber: "42"
              quotedBool: 'true'
              explicitString: !!str 7
              bytes: !!binary aGVsbG8=
              text: hello world
              nested: {list: [1, "2", {deep: false}], map: {a: 1.25}}
            steps: [{op: A}]
            """)
        #expect(definition.bucket == [
            "count": .integer(3),
            "negative": .integer(-42),
            "hex": .integer(31),
            "ratio": .double(1.5),
            "exponent": .double(1000),
            "flag": .bool(true),
            "off": .string("no"),
            "version": .double(1.1),
            "octal": .integer(15),
            "leadingZero": .integer(123),
            "time": .string("12:30"),
            "infinity": .double(-.infinity),
            "nothing": .null,
            "tilde": .null,
            "empty": .null,
            "day": .string("2024-05-01"),
            "moment": .string("2024-05-01T12:30:00Z"),
            "explicitDay": .date(Date(timeIntervalSince1970: 1_714_521_600)),
            "quotedNumber": .string("42"),
            "quotedBool": .string("true"),
            "explicitString": .string("7"),
            "bytes": .bytes(Data("hello".utf8)),
            "text": .string("hello world"),
            "nested": .map([
                "list": .array([.integer(1), .string("2"), .map(["deep": .bool(false)])]),
                "map": .map(["a": .double(1.25)]),
            ]),
        ])
    }

    /// Plain text is typed from its bytes (`FlowFileReader.plainScalarTag`), without regular
    /// expressions, exactly as the core schema's patterns (`FlowCoreSchema.resolver`) type it.
    @Test func plainTextIsTypedAsTheCoreSchemaPatternsTypeIt() {
        var samples = [
            "", "a", "i17", "file-0000001.jpg", "hello world", "é", "日本", "/tmp/x", "_x", "@x", "x:y",
            "y", "Y", "n", "N", "yes", "Yes", "YES", "yES", "no", "No", "NO", "true", "True", "TRUE", "tRUE",
            "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL", "nULL",
            "yesno", "nulls", "truer", "falsey", "online", "offset", "nothing", "Yellow", "over", "t", "f", "o",
            "0", "1", "42", "-42", "+42", "-0", "+0", "00", "007", "08", "019", "0x1F", "0o17", "0b101", "1_000", "1:30",
            "-", "+", "--1", "1-", "12a", "1.5", "1e3", ".5", ".inf", "-.inf", ".nan", ".x", "<<", "<", "~", "=", "==",
            "2024-05-01", "2024-05-01T12:30:00Z", "9223372036854775807", "99999999999999999999", "-9223372036854775808",
            "0123", "12:30", "1.10", "0x", "0o", "0o8", "0xG", "-0x1F", "+0o7", "1.", "-.5", "+.5e-3", "1e", "1e+", "1E5",
            ".Inf", "-.INF", "+.inf", "-.nan", ".NaN", ".NAN", ".nAn", "1.5.5", "e3", "- 1", "1 ", "ñ1", "~~", "<<<",
        ]
        // And random text over the characters the patterns turn on.
        let alphabet = Array("0123456789-+._:<~=xeEoObBaflnrstuyYNTF ")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3000 {
            samples.append(String((0..<Int.random(in: 1...7, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }))
        }
        for text in samples {
            #expect(FlowFileReader.plainScalarTag(text).rawValue == FlowFileReader.resolverTag(text).rawValue, "\(text.debugDescription)")
        }
        // The patterns are the core schema's, not YAML 1.1's.
        #expect(FlowFileReader.resolverTag("yes") == .str)
        #expect(FlowFileReader.resolverTag("0123") == .int)
        #expect(FlowFileReader.resolverTag("12:30") == .str)
        #expect(FlowFileReader.resolverTag("2024-05-01") == .str)
        #expect(FlowFileReader.resolverTag("1.10") == .float)
        #expect(FlowFileReader.resolverTag("True") == .bool)
        #expect(FlowFileReader.resolverTag("<<") == .merge)
    }

    @Test func mergeKeysAndAliasesFillParameters() throws {
        let definition = try load("""
            flow: merge
            bucket:
              defaults: &defaults {retries: 2, mode: fast}
            steps:
              - op: A
                with:
                  <<: *defaults
                  mode: slow
              - op: B
                with: *defaults
            """)
        #expect(definition.steps.map(\.strippedOfLocations) == [
            .operation(.init(op: "A", parameters: ["retries": .integer(2), "mode": .string("slow")])),
            .operation(.init(op: "B", parameters: ["retries": .integer(2), "mode": .string("fast")])),
        ])
    }

    @Test func emptyWithAndBucketMeanNone() throws {
        let definition = try load("flow: e\nbucket:\nsteps:\n  - op: A\n    with:\n")
        #expect(definition.strippedOfLocations == FlowDefinition(name: "e", steps: [.operation(.init(op: "A"))]))
    }

    @Test func registeredOpsLoad() throws {
        var registry = FlowOperationRegistry()
        registry.register("SimplePrintOp") { _ in FlowOperation() }
        registry.register("UploadSingleImageOp") { _ in FlowOperation() }
        let definition = try load(sampleYAML, registry: registry)
        #expect(definition.strippedOfLocations == expectedSample)
    }

    @Test func loadsFromAFileAndNamesItInLocations() throws {
        let path = try temporaryFile(sampleYAML, suffix: ".yaml")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let definition = try FlowFileLoader().load(contentsOf: path)
        #expect(definition.strippedOfLocations == expectedSample)
        #expect(definition.location == FlowSourceLocation(file: path, line: 1, column: 1))
    }

    @Test(arguments: [
        ("3", FlowValue.integer(3)),
        ("-7", .integer(-7)),
        ("1.5", .double(1.5)),
        ("true", .bool(true)),
        ("false", .bool(false)),
        ("null", .null),
        ("~", .null),
        ("hello", .string("hello")),
        ("hello world", .string("hello world")),
        ("\"3\"", .string("3")),
        ("'true'", .string("true")),
        ("2024-05-01", .string("2024-05-01")),
        ("[1, x]", .array([.integer(1), .string("x")])),
        ("{a: 1}", .map(["a": .integer(1)])),
        ("", .string("")),
        ("a: b", .string("a: b")),
        ("- a", .string("- a")),
        ("{unclosed", .string("{unclosed")),
        ("99999999999999999999", .string("99999999999999999999")),
        ("see issue #12", .string("see issue #12")),
        (" 3 ", .integer(3)),
        ("*notAnAlias", .string("*notAnAlias")),
    ])
    func valueFromScalarReadsTextAsYAMLWould(text: String, expected: FlowValue) {
        #expect(FlowFileLoader.value(fromScalar: text) == expected)
    }

    /// How values are typed, the YAML 1.2 core schema as Flow.docc/FlowFiles.md's table gives it: text that
    /// YAML 1.1 typed against a user's reading (`NO`, `off`, `0123` as octal, `12:30` as base 60,
    /// dates) is text, or the decimal integer it reads as.
    static let coreSchemaTable: [(String, FlowValue)] = [
        ("0123", .integer(123)),
        ("12:30", .string("12:30")),
        ("NO", .string("NO")),
        ("off", .string("off")),
        ("yes", .string("yes")),
        ("on", .string("on")),
        ("1.10", .double(1.1)),
        ("2024-01-01", .string("2024-01-01")),
        ("0x1F", .integer(31)),
        ("0o17", .integer(15)),
        ("true", .bool(true)),
        ("True", .bool(true)),
        ("FALSE", .bool(false)),
        ("~", .null),
        ("null", .null),
        (".inf", .double(.infinity)),
        ("-.inf", .double(-.infinity)),
        ("+12", .integer(12)),
        ("1e3", .double(1000)),
        ("0b101", .string("0b101")),
        ("1_000", .string("1_000")),
        ("=", .string("=")),
    ]

    @Test(arguments: FlowFileLoaderTests.coreSchemaTable)
    func setAndBucketAndParametersTypeByTheCoreSchema(text: String, expected: FlowValue) throws {
        #expect(FlowFileLoader.value(fromScalar: text) == expected, "--set v=\(text)")
        let definition = try load("""
            flow: typing
            bucket:
              v: \(text)
            steps:
              - op: A
                with:
                  v: \(text)
            """)
        #expect(definition.bucket["v"] == expected, "bucket: v: \(text)")
        guard case .operation(let step) = definition.steps.first else {
            Issue.record("not an op step: \(definition.steps)")
            return
        }
        #expect(step.parameters["v"] == expected, "with: v: \(text)")
        let bucketFile = try temporaryFile("v: \(text)\n", suffix: ".yaml")
        defer { try? FileManager.default.removeItem(atPath: bucketFile) }
        #expect(try FlowFileLoader().loadBucket(contentsOf: bucketFile)["v"] == expected, "--bucket v: \(text)")
    }

    @Test func notANumberIsADouble() throws {
        for text in [".nan", ".NaN", ".NAN"] {
            guard case .double(let value) = FlowFileLoader.value(fromScalar: text) else {
                Issue.record("\(text) is not a double")
                continue
            }
            #expect(value.isNaN)
        }
        #expect(FlowFileLoader.value(fromScalar: "nan") == .string("nan"))
    }

    @Test func stepKeysTypeByTheCoreSchema() throws {
        let definition = try load("""
            flow: keys
            steps:
              - op: A
                timeout: 0x1E
                retry: {attempts: 010, delay: 1.50, jitter: True}
            """)
        guard case .operation(let step) = definition.steps.first else {
            Issue.record("not an op step: \(definition.steps)")
            return
        }
        #expect(step.timeout == .seconds(30))
        #expect(step.retry?.attempts == 10)
        #expect(step.retry?.delay == .seconds(1.5))
        #expect(step.retry?.jitter == true)
        // YAML 1.1's words and base 60 are text, which these keys do not take.
        let error = try #require(throws: FlowFileError.self) {
            try load("""
                flow: keys
                steps:
                  - op: A
                    timeout: 1:30
                    retry: {attempts: 3, jitter: yes}
                """)
        }
        #expect(error.diagnostics.map(\.description) == [
            "f.yaml:4:14: timeout must be a duration like 30m, 24h, 7d, 1h30m, 90s, 500ms or 1.5 (a bare number is seconds), found the text '1:30'",
            "f.yaml:5:34: jitter must be true or false, found the text 'yes'",
        ])
    }

    @Test func loadBucketReadsYAMLAndJSONMaps() throws {
        let yaml = try temporaryFile("images: [a, b]\ncount: 2\n", suffix: ".yaml")
        let json = try temporaryFile(#"{"images": ["a", "b"], "count": 2}"#, suffix: ".json")
        defer {
            try? FileManager.default.removeItem(atPath: yaml)
            try? FileManager.default.removeItem(atPath: json)
        }
        let expected: [String: FlowValue] = ["images": .array([.string("a"), .string("b")]), "count": .integer(2)]
        #expect(try FlowFileLoader().loadBucket(contentsOf: yaml) == expected)
        #expect(try FlowFileLoader().loadBucket(contentsOf: json) == expected)
    }

    /// `--bucket <(make-bucket)` and named pipes: read to their end, as a file is.
    @Test func aBucketFromAPipeIsReadToItsEnd() throws {
        let path = NSTemporaryDirectory() + "flow-bucket-\(UInt32.random(in: 0...UInt32.max)).pipe"
        try #require(mkfifo(path, 0o600) == 0)
        defer { try? FileManager.default.removeItem(atPath: path) }
        // Bigger than a pipe's 64 KiB buffer: the writer blocks until the loader has read some.
        let names = (0..<20_000).map { "image-\($0)" }
        let text = "images: [\(names.joined(separator: ", "))]\n"
        let writer = Thread {
            guard let handle = FileHandle(forWritingAtPath: path) else { return }
            handle.write(Data(text.utf8))
            try? handle.close()
        }
        writer.start()
        let bucket = try FlowFileLoader().loadBucket(contentsOf: path)
        #expect(bucket == ["images": .array(names.map(FlowValue.string))])
    }

    /// Big JSON bucket files (64 KiB and more) skip the YAML parser; they must come out exactly as
    /// the YAML reader would read the same text (JSON is YAML).
    @Test func aBigJSONBucketReadsAsTheYAMLReaderReadsIt() throws {
        let pad = String(repeating: "p", count: 1 << 20)
        let text = #"""
            {"pad": "\#(pad)", "s": "x", "date": "2024-05-01", "i": 3, "neg": -7, "d": 1.5, "whole": 2.0, "exp": 1e3,
             "t": true, "f": false, "n": null, "a": [1, "two", [3.5], {"k": null}], "m": {"k": "v", "e": []}, "u": "caf\u00e9 \"q\""}
            """#
        let json = try temporaryFile(text, suffix: ".json")
        // A comment first keeps the same text off the JSON path.
        let yaml = try temporaryFile("# the same text, read as YAML\n" + text, suffix: ".yaml")
        defer {
            try? FileManager.default.removeItem(atPath: json)
            try? FileManager.default.removeItem(atPath: yaml)
        }
        let fast = try FlowFileLoader().loadBucket(contentsOf: json)
        #expect(fast == (try FlowFileLoader().loadBucket(contentsOf: yaml)))
        #expect(fast["date"] == .string("2024-05-01"))
        #expect(fast["i"] == .integer(3))
        #expect(fast["whole"] == .double(2))
        #expect(fast["u"] == .string("café \"q\""))
        #expect(fast["exp"] == .double(1000))
        #expect(fast["a"] == .array([.integer(1), .string("two"), .array([.double(3.5)]), .map(["k": .null])]))
    }

    @Test func aBrokenJSONBucketIsReportedWithItsLineAndColumn() throws {
        let json = try temporaryFile("{\n  \"items\": [1, 2,\n  \"x\": 3\n}\n", suffix: ".json")
        defer { try? FileManager.default.removeItem(atPath: json) }
        let error = try #require(throws: FlowFileError.self) { try FlowFileLoader().loadBucket(contentsOf: json) }
        #expect(String(describing: error).contains("\(json):4:1: invalid YAML or JSON"), "\(error)")
    }

    @Test func aBigJSONIntegerPastInt64IsRefusedAsInYAML() throws {
        let pad = String(repeating: "p", count: 1 << 20)
        let json = try temporaryFile(#"{"pad": "\#(pad)", "huge": 12345678901234567890}"#, suffix: ".json")
        defer { try? FileManager.default.removeItem(atPath: json) }
        let error = try #require(throws: FlowFileError.self) { try FlowFileLoader().loadBucket(contentsOf: json) }
        #expect(String(describing: error).contains("is not an integer that fits in 64 bits"), "\(error)")
    }

    @Test func aKeyGivenTwiceInASmallJSONBucketIsReported() throws {
        let json = try temporaryFile(#"{"a": 1, "a": 2}"#, suffix: ".json")
        defer { try? FileManager.default.removeItem(atPath: json) }
        let error = try #require(throws: FlowFileError.self) { try FlowFileLoader().loadBucket(contentsOf: json) }
        #expect(String(describing: error).contains("'a'"), "\(error)")
    }

    /// Big JSON files skip the YAML parser, whose reading of a key given twice the JSON reader
    /// lacks: it counts the keys, and such a file goes to the YAML reader, which names the key.
    @Test(arguments: [#""a": 1, "a": 2"#, #""m": {"k": 1, "k": 2}"#, #""l": [{"k": 1, "x:y": "\":", "k": 3}]"#])
    func aKeyGivenTwiceInABigJSONBucketIsReported(entries: String) throws {
        let pad = String(repeating: "p", count: FlowJSONValue.minimumSize)
        let json = try temporaryFile(#"{"pad": "\#(pad)", "#  + entries + "}", suffix: ".json")
        defer { try? FileManager.default.removeItem(atPath: json) }
        let error = try #require(throws: FlowFileError.self) { try FlowFileLoader().loadBucket(contentsOf: json) }
        #expect(String(describing: error).contains("'\(entries.contains("\"a\"") ? "a" : "k")'"), "\(error)")
        // Keys in strings and escaped quotes are not counted as keys: the same file without the
        // second key reads on the JSON path, as the YAML reader reads it.
        let single = try temporaryFile(#"{"pad": "\#(pad)", "q": "a \"b\": c", "l": [{"k": 1, "x:y": "\":"}]}"#, suffix: ".json")
        defer { try? FileManager.default.removeItem(atPath: single) }
        let text = try String(contentsOfFile: single, encoding: .utf8)
        #expect(FlowJSONValue.read(text) != nil)
        #expect(try FlowFileLoader().loadBucket(contentsOf: single)["q"] == .string(#"a "b": c"#))
    }

    @Test func aJSONListIsNotABucket() throws {
        let json = try temporaryFile("[1, 2]", suffix: ".json")
        defer { try? FileManager.default.removeItem(atPath: json) }
        let error = try #require(throws: FlowFileError.self) { try FlowFileLoader().loadBucket(contentsOf: json) }
        #expect(String(describing: error).contains("must be a map"), "\(error)")
    }
}
