import FlowStandardOps
import FlowTestSupport
import Foundation
import Testing

@Suite struct SigV4SignerTests {
    static let example = S3Credentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    /// 2013-05-24T00:00:00Z, the time of AWS's examples.
    static let exampleDate = Date(timeIntervalSince1970: 1_369_353_600)

    static func signature(of headers: [(String, String)]) -> String? {
        headers.first { $0.0 == "Authorization" }?.1.split(separator: "=").last.map(String.init)
    }

    /// AWS's published examples for S3 (Signature Version 4, header form).
    @Test func awsPublishedExamples() {
        let signer = SigV4Signer(credentials: Self.example, region: "us-east-1")
        let get = signer.sign(method: "GET", host: "examplebucket.s3.amazonaws.com", path: "/test.txt", query: [],
                              headers: [("Range", "bytes=0-9")], payloadHash: SigV4Signer.emptyPayloadHash, date: Self.exampleDate)
        #expect(Self.signature(of: get) == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        #expect(get.first { $0.0 == "Authorization" }?.1 == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        let list = signer.sign(method: "GET", host: "examplebucket.s3.amazonaws.com", path: "/", query: [("prefix", "J"), ("max-keys", "2")],
                               headers: [], payloadHash: SigV4Signer.emptyPayloadHash, date: Self.exampleDate)
        #expect(Self.signature(of: list) == "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")
        let lifecycle = signer.sign(method: "GET", host: "examplebucket.s3.amazonaws.com", path: "/", query: [("lifecycle", "")],
                                    headers: [], payloadHash: SigV4Signer.emptyPayloadHash, date: Self.exampleDate)
        #expect(Self.signature(of: lifecycle) == "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543")
    }

    @Test func pathsAreEncodedAsS3SignsThem() {
        #expect(SigV4Signer.encodePath("/photos/a b+c ü~_.-/x") == "/photos/a%20b%2Bc%20%C3%BC~_.-/x")
    }

    @Test func credentialsNeverPrintTheirSecrets() {
        let credentials = S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "very-secret", sessionToken: "token-secret")
        var dumped = ""
        dump(credentials, to: &dumped)
        for text in [String(describing: credentials), "\(credentials)", String(reflecting: credentials), dumped] {
            #expect(!text.contains("very-secret") && !text.contains("token-secret"), "\(text)")
        }
    }

    /// The same requests signed by botocore (Python, the version requirements-test.txt pins): methods,
    /// keys with spaces and unicode, query strings, extra headers, session tokens.
    @Test func matchesBotocoreOnGeneratedRequests() async throws {
        try await MotoS3Server.installIfMissing()  // botocore at the pinned version
        var random = SystemRandomNumberGenerator()
        let keys = ["a.jpg", "photos/2026/a b.jpg", "ünïcode/fïlé ☃.png", "we!rd'(chars)*&$@=;:+,?.txt", "deep/er/path/~tilde_x-y.z", "%41literal%"]
        let methods = ["GET", "PUT", "POST", "HEAD", "DELETE"]
        let queries: [[(String, String)]] = [[], [("uploads", "")], [("partNumber", "3"), ("uploadId", "a/b+c=d")],
                                             [("prefix", "photos/ü x"), ("max-keys", "1000"), ("delimiter", "/")],
                                             [("list-type", "2"), ("continuation-token", "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=")]]
        var cases: [[String: Any]] = []
        var expected: [(signature: String?, headers: [(String, String)])] = []
        for index in 0..<60 {
            let credentials = S3Credentials(
                accessKeyID: "AKID\(index)EXAMPLE", secretAccessKey: "secret/\(index)+key",
                sessionToken: index % 3 == 0 ? "FwoGZXIvYXdzE\(index)token//+==" : nil)
            let region = ["us-east-1", "eu-west-1", "ap-southeast-2"][index % 3]
            let method = methods[index % methods.count]
            let path = "/bucket-\(index % 4)/" + SigV4Signer.encodePath(keys[Int.random(in: 0..<keys.count, using: &random)])
            let query = queries[Int.random(in: 0..<queries.count, using: &random)]
            var headers: [(String, String)] = [("Content-Length", String(index * 1000))]
            if index % 2 == 0 { headers.append(("Content-Type", "image/jpeg")) }
            if index % 5 == 0 { headers.append(("x-amz-meta-Note", "  two   spaces  inside ")) }
            let payload = index % 4 == 0 ? SigV4Signer.unsignedPayload : SigV4Signer.emptyPayloadHash
            let date = Date(timeIntervalSince1970: 1_790_000_000 + Double(index) * 86_399)
            let host = index % 2 == 0 ? "127.0.0.1:9000" : "bucket.s3.\(region).amazonaws.com"
            let signer = SigV4Signer(credentials: credentials, region: region)
            let signed = signer.sign(method: method, host: host, path: path, query: query, headers: headers, payloadHash: payload, date: date)
            let amzDate = signed.first { $0.0 == "x-amz-date" }!.1
            var caseJSON: [String: Any] = [
                "accessKeyID": credentials.accessKeyID, "secret": credentials.secretAccessKey, "region": region, "method": method,
                "host": host, "path": path, "query": query.map { [$0.0, $0.1] }, "headers": Dictionary(headers, uniquingKeysWith: { $1 }),
                "amzDate": amzDate, "payloadHash": payload,
            ]
            if let token = credentials.sessionToken { caseJSON["token"] = token }
            cases.append(caseJSON)
            expected.append((Self.signature(of: signed), signed))
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sigv4-cases-\(UUID()).json")
        try JSONSerialization.data(withJSONObject: cases).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FlowTestSupport/Resources/botocore_sigv4.py").path
        let result = try await TestCommand.run(["python3", script, file.path])
        try #require(result.status == 0, "botocore signer failed: \(result.output)")
        let answers = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [[String: String]])
        try #require(answers.count == cases.count)
        for (index, answer) in answers.enumerated() {
            let authorization = expected[index].headers.first { $0.0 == "Authorization" }?.1 ?? ""
            #expect(authorization.contains("SignedHeaders=\(answer["signedHeaders"] ?? "?"),"), "case \(index): \(authorization)")
            #expect(expected[index].signature == answer["signature"], "case \(index): \(cases[index])\nbotocore's canonical request:\n\(answer["canonical"] ?? "")")
        }
    }
}
