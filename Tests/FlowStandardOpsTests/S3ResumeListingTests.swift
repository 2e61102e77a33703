import FlowTestSupport
import Foundation
import Testing
@testable import FlowStandardOps

/// The pieces of a resumed multipart upload that need no store: which listed parts an upload of
/// this file can keep, reading S3's listings, and the listings' query strings signed as botocore
/// signs them.
struct S3ResumeListingTests {
    static let mebibyte = 1 << 20

    static func part(_ number: Int, _ size: Int64) -> S3Upload.StoredPart {
        S3Upload.StoredPart(number: number, etag: "\"e\(number)\"", size: size, checksum: nil, stored: nil)
    }

    /// A 23 MiB file in 5 MiB parts has 5, the last 3 MiB long.
    @Test func onlyAnUploadOfTheSamePartSizeAndNoPartPastTheLastFits() {
        let size = Int64(23 * Self.mebibyte)
        let five = Int64(5 * Self.mebibyte)
        #expect(S3Upload.fits([], size: size, partSize: 5 * Self.mebibyte, partCount: 5))
        #expect(S3Upload.fits([Self.part(1, five), Self.part(3, five)], size: size, partSize: 5 * Self.mebibyte, partCount: 5))
        #expect(S3Upload.fits([Self.part(2, five), Self.part(5, Int64(3 * Self.mebibyte))], size: size, partSize: 5 * Self.mebibyte, partCount: 5))
        #expect(S3Upload.fits([Self.part(5, Int64(3 * Self.mebibyte))], size: size, partSize: 5 * Self.mebibyte, partCount: 5))
        // Parts of 6 MiB, or a sixth part: another upload of this key.
        #expect(!S3Upload.fits([Self.part(1, Int64(6 * Self.mebibyte))], size: size, partSize: 5 * Self.mebibyte, partCount: 5))
        #expect(!S3Upload.fits([Self.part(1, five), Self.part(6, five)], size: size, partSize: 5 * Self.mebibyte, partCount: 5))
        #expect(!S3Upload.fits([Self.part(5, five)], size: size, partSize: 5 * Self.mebibyte, partCount: 5))
        #expect(S3Upload.length(ofPart: 5, size: size, partSize: 5 * Self.mebibyte) == Int64(3 * Self.mebibyte))
        #expect(S3Upload.length(ofPart: 2, size: size, partSize: 5 * Self.mebibyte) == five)
    }

    @Test func repeatedElementsAndTimesAreReadAsS3WritesThem() {
        let text = """
            <ListPartsResult><IsTruncated>true</IsTruncated><Part><PartNumber>1</PartNumber><ETag>&quot;a&quot;</ETag></Part>\
            <Part><PartNumber>2</PartNumber><ETag>&quot;b&quot;</ETag></Part></ListPartsResult>
            """
        let parts = S3Upload.elements("Part", in: text)
        #expect(parts.count == 2)
        #expect(parts.map { S3ErrorResponse.value(of: "ETag", in: $0) } == ["\"a\"", "\"b\""])
        #expect(S3Upload.elements("Upload", in: text).isEmpty)
        #expect(S3Upload.date("2026-11-27T21:56:12.000Z") == Date(timeIntervalSince1970: 1_795_816_572))
        #expect(S3Upload.date("2026-11-27T21:56:12Z") == Date(timeIntervalSince1970: 1_795_816_572))
    }

    /// `ListMultipartUploads` (a bare `uploads`, a `prefix` with `/` and spaces, markers) and
    /// `ListParts` (`part-number-marker`) are signed as botocore signs them.
    @Test func theListingsQueriesAreSignedAsBotocoreSignsThem() async throws {
        try await MotoS3Server.installIfMissing()  // botocore at the pinned version
        let requests: [(path: String, query: [(String, String)])] = [
            ("/photos", [("uploads", ""), ("prefix", "2026/01/a b.jpg"), ("max-uploads", "50")]),
            ("/photos", [("uploads", ""), ("prefix", "2026"), ("max-uploads", "50"), ("key-marker", "2026/01/a b.jpg"),
                         ("upload-id-marker", "VXBsb2FkIElE+/=")]),
            ("/photos/" + SigV4Signer.encodePath("2026/01/a b.jpg"), [("uploadId", "VXBsb2FkIElE+/="), ("max-parts", "200"),
                                                                      ("part-number-marker", "200")]),
        ]
        let signer = SigV4Signer(credentials: S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret/key+1"), region: "us-east-1")
        var cases: [[String: Any]] = []
        var signatures: [String] = []
        for request in requests {
            let date = Date(timeIntervalSince1970: 1_795_816_572)
            let signed = signer.sign(method: "GET", host: "127.0.0.1:9000", path: request.path, query: request.query, headers: [],
                                     payloadHash: SigV4Signer.emptyPayloadHash, date: date)
            let authorization = signed.first { $0.0 == "Authorization" }!.1
            signatures.append(String(authorization.split(separator: "Signature=").last ?? ""))
            cases.append(["accessKeyID": "AKIDEXAMPLE", "secret": "secret/key+1", "region": "us-east-1", "method": "GET",
                          "host": "127.0.0.1:9000", "path": request.path, "query": request.query.map { [$0.0, $0.1] },
                          "headers": [String: String](), "amzDate": signed.first { $0.0 == "x-amz-date" }!.1,
                          "payloadHash": SigV4Signer.emptyPayloadHash])
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sigv4-listing-\(UUID()).json")
        try JSONSerialization.data(withJSONObject: cases).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FlowTestSupport/Resources/botocore_sigv4.py").path
        let result = try await TestCommand.run(["python3", script, file.path])
        try #require(result.status == 0, "botocore signer failed: \(result.output)")
        let answers = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [[String: String]])
        try #require(answers.count == requests.count)
        for (index, answer) in answers.enumerated() {
            #expect(answer["signature"] == signatures[index], "request \(index): botocore's canonical request:\n\(answer["canonical"] ?? "")")
        }
    }
}
