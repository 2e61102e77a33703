import Flow
@testable import FlowStandardOps
import FlowTestSupport
import Foundation
import NIOHTTP1
import Testing

/// `skipExisting`'s rules and the pieces they compare: the parameter, the stored modification
/// time's text, a HEAD's stored checksum, and what `verify` calls a difference.
@Suite struct UploadSkipRuleTests {
    @Test func skipExistingTakesBooleansAndTheThreeRuleNamesAndRefusesAnythingElse() throws {
        func rule(_ value: FlowValue?) throws -> UploadSkipRule {
            var values: [String: FlowValue] = [:]
            values["skipExisting"] = value
            return try UploadSkipRule(parameters: FlowParameters(values, operation: "UploadFileOp"))
        }
        #expect(try rule(nil) == .off)
        #expect(try rule(.bool(false)) == .off)
        #expect(try rule(.bool(true)) == .size)
        #expect(try rule(.string("true")) == .size)
        #expect(try rule(.string("Size")) == .size)
        #expect(try rule(.string("MODTIME")) == .modtime)
        #expect(try rule(.string("checksum")) == .checksum)
        let error = #expect(throws: FlowParameterError.self) { try rule(.string("mtime")) }
        #expect(error?.description.contains("must be size, modtime or checksum") == true, "\(String(describing: error))")
        #expect(throws: FlowParameterError.self) { try rule(.integer(1)) }
    }

    @Test func checksumWithoutAnAlgorithmIsRefusedAndTheRuleTravelsToWorkersAsGiven() throws {
        #expect(throws: FlowParameterError.self) {
            try UploadFileOp(parameters: FlowParameters(["url": "http://127.0.0.1:9/x", "skipExisting": "checksum"], operation: "UploadFileOp"))
        }
        let op = try UploadFileOp(parameters: FlowParameters(["url": "http://127.0.0.1:9/x", "skipExisting": "modtime"], operation: "UploadFileOp"))
        #expect(op.skipRule == .modtime && op.skipsExisting)
        #expect(op.remoteParameters["skipExisting"] == .string("modtime"))
        let sized = try UploadFileOp(parameters: FlowParameters(["url": "http://127.0.0.1:9/x", "skipExisting": true], operation: "UploadFileOp"))
        #expect(sized.remoteParameters["skipExisting"] == .bool(true), "a worker of the previous release reads size as it did")
    }

    @Test func theModificationTimeIsWrittenAsRcloneDoesAndReadBackToTheNanosecond() throws {
        let folder = try TemporaryDirectory()
        let file = folder.file("a.bin")
        try Data("x".utf8).write(to: file)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_700_000_000.25)], ofItemAtPath: file.path)
        let time = try #require(FileModificationTime(path: file.path))
        #expect(time.text == "1700000000.25")
        #expect(FileModificationTime(text: time.text) == time)
        #expect(FileModificationTime(text: "1700000000")?.text == "1700000000")
        #expect(FileModificationTime(text: "1700000000.123456789999") == FileModificationTime(text: "1700000000.123456789"))
        #expect(FileModificationTime(text: "1700000000.5") != FileModificationTime(text: "1700000000.25"))
        for bad in ["", "abc", "17.", "17.x", "1.2.3"] { #expect(FileModificationTime(text: bad) == nil, "\(bad)") }
    }

    @Test func aHeadGivesTheStoredChecksumOfTheAlgorithmAndMD5FromASinglePartETag() {
        var headers = HTTPHeaders()
        headers.add(name: "x-amz-checksum-crc32c", value: "AAAAAA==")
        headers.add(name: "ETag", value: "\"900150983cd24fb0d6963f7d28e17f72\"")
        let head = ObjectHead(status: 200, headers: headers)
        #expect(head.checksum(.crc32c) == "AAAAAA==")
        #expect(head.checksum(.crc64nvme) == nil)
        #expect(head.checksum(.md5) == UploadChecksum.md5.base64(of: Array("abc".utf8)))
        var multipart = HTTPHeaders()
        multipart.add(name: "ETag", value: "\"900150983cd24fb0d6963f7d28e17f72-3\"")
        #expect(ObjectHead(status: 200, headers: multipart).checksum(.md5) == nil)
    }

    @Test func verifyComparesSizeAndChecksumAndFallsBackToTheETagOnlyWithoutAChecksum() {
        let entry = UploadManifestEntry(target: "s3://b/k", size: 10, algorithm: .crc32c, checksum: "AAAAAA==", etag: "\"e1\"")
        #expect(ObjectCheck.compare(entry, size: 10, checksum: "AAAAAA==", etag: "\"e2\"").differences.isEmpty,
                "a matching checksum wins over an ETag that changed")
        #expect(ObjectCheck.compare(entry, size: 12, checksum: "BBBBBB==", etag: "\"e1\"").differences == ["size 10 ≠ 12", "crc32c AAAAAA== ≠ BBBBBB=="])
        #expect(ObjectCheck.compare(entry, size: 10, checksum: nil, etag: "\"e2\"").differences == ["etag \"e1\" ≠ \"e2\""])
        #expect(ObjectCheck.compare(entry, size: nil, checksum: nil, etag: nil).differences.isEmpty)
    }

    /// nginx sends no stored checksum: `skipExisting: checksum` sends every file, as it cannot
    /// know they are the same.
    @Test func checksumOnAServerThatKeepsNoneSendsTheFileAgain() async throws {
        let server = try NginxServer()
        try await server.start()
        let folder = try TemporaryDirectory()
        let file = folder.file("same.bin")
        try Data(repeating: 3, count: 2_000).write(to: file)
        let step = group("UploadFileOp", input: "files", output: "urls", maxConcurrent: 1,
                         ["url": .string(server.url("/sum")), "skipExisting": "checksum", "checksum": "sha256"])
        for _ in 0..<2 {
            let flow = await runFlow(bucket: ["files": strings([file.path])], steps: [step])
            #expect(flow.isSuccess, "\(flow.errorText)")
        }
        let log = await server.accessLog(waitingFor: 4) { $0.method == "PUT" || $0.method == "HEAD" }
        #expect(log.filter { $0.method == "PUT" }.count == 2, "\(log)")
        #expect(log.filter { $0.method == "HEAD" }.count == 2)
    }
}
