import Foundation
import Testing

@testable import Flow

/// Anchors used as map keys (issue 46 item 12): Yams hashes every key to find duplicates, through
/// every alias in it, so each level of `lN: &lN {*l(N-1)a : 1, *l(N-1)b : 2}` doubled the time
/// to read the file (years at 40 levels, from 3 KB). Such keys are refused before composing.
@Suite struct AnchorKeyBombTests {
    /// The issue's file: `levels` levels of maps whose keys are the aliases of the level below.
    static func bomb(levels: Int) -> String {
        var lines = ["flow: bomb", "bucket:", "  l0a: &l0a {x: 1}", "  l0b: &l0b {y: 2}"]
        for level in 1...levels {
            let below = level - 1
            lines.append("  l\(level)a: &l\(level)a {*l\(below)a : 1, *l\(below)b : 2}")
            lines.append("  l\(level)b: &l\(level)b {*l\(below)b : 1, *l\(below)a : 2}")
        }
        lines.append("steps: [{op: A}]")
        return lines.joined(separator: "\n") + "\n"
    }

    private func diagnostics(_ text: String) -> [String] {
        do {
            _ = try FlowFileLoader().load(text: text, file: "f.yaml")
            return []
        } catch {
            return error.diagnostics.map(\.description)
        }
    }

    @Test func theIssuesFortyLevelsAreRefusedAtTheFirstAliasUsedAsAKey() {
        #expect(diagnostics(Self.bomb(levels: 40)) == [
            "f.yaml:5:14: the alias '*l0a' of a map is used in a key: a key must be text, and a map as a key is read again for every "
                + "use of it (a file of such keys can take years to read); write the key out as text",
        ])
    }

    @Test func anAliasInsideAWrittenKeyIsRefusedToo() {
        let text = "flow: x\nbucket:\n  s: &s [1, 2]\n  m: {? [a, *s] : 1}\nsteps: [{op: A}]\n"
        #expect(diagnostics(text) == [
            "f.yaml:4:13: the alias '*s' of a list is used in a key: a key must be text, and a list as a key is read again for every "
                + "use of it (a file of such keys can take years to read); write the key out as text",
        ])
    }

    @Test func anExplicitKeyOverLinesIsRefusedToo() {
        let text = "flow: x\nbucket:\n  m: &m {a: 1}\n  n:\n    ? - b\n      - *m\n    : 1\nsteps: [{op: A}]\n"
        #expect(diagnostics(text).first?.hasPrefix("f.yaml:6:9: the alias '*m' of a map is used in a key") == true, "\(diagnostics(text))")
    }

    @Test func onlyTextThatMayHoldAnAliasInAKeyIsParsedTwice() {
        for keyed in ["a: &a 1\nb: {*a : 1}", "a: &a 1\n*a : 2", "a: &a 1\nb: {[*a, x]: 1}", "a: &a 1\n? *a\n: 2", Self.bomb(levels: 2)] {
            #expect(FlowFileSyntax.mayUseAliasesInKeys(keyed), "\(keyed)")
        }
        for values in ["a: &a {x: 1}\nb: *a\nc: [*a, *a]\nd: {e: 1, <<: *a}\nf: \"*.jpg\"\n- *a\n", "a: *x\nb: \"*: no anchor\""] {
            #expect(!FlowFileSyntax.mayUseAliasesInKeys(values), "\(values)")
        }
    }

    @Test func aBucketFileIsRefusedTheSameWay() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString).yaml").path
        try "a: &a {x: 1}\nb: {*a : 1}\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = try #require(throws: FlowFileError.self) { try FlowFileLoader().loadBucket(contentsOf: path) }
        #expect(error.diagnostics.map(\.description).first?.hasPrefix("\(path):2:5: the alias '*a' of a map is used in a key") == true,
                "\(error)")
    }

    @Test func aliasesOfValuesMergeKeysAndTextKeysStillLoad() throws {
        let text = """
            flow: x
            bucket:
              name: &name photos
              base: &base {retries: 3, folder: *name}
              copy: {<<: *base, extra: [*name, *name]}
              *name : the anchored text as a key
            steps: [{op: A}]

            """
        let definition = try FlowFileLoader().load(text: text, file: "f.yaml")
        #expect(definition.bucket["copy"] == .map(["retries": .integer(3), "folder": .string("photos"), "extra": .array([.string("photos"), .string("photos")])]))
        #expect(definition.bucket["photos"] == .string("the anchored text as a key"))
    }
}
