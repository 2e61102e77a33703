import Flow
import Foundation
import NIOCore
import NIOHTTP1
import Testing
@testable import FlowStandardOps

@Suite struct S3ErrorResponseTests {
    static func answer(_ status: Int, _ body: String, headers: [(String, String)] = []) -> FileUpload.Answer {
        FileUpload.Answer(status: HTTPResponseStatus(statusCode: status), headers: HTTPHeaders(headers), excerpt: Data(body.utf8))
    }

    static func errorXML(_ code: String, _ message: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <Error><Code>\(code)</Code><Message>\(message)</Message><AWSAccessKeyId>AKIAEXAMPLE</AWSAccessKeyId>\
        <StringToSign>AWS4-HMAC-SHA256 secret-looking</StringToSign><RequestId>4442587FB7D0A2F9</RequestId></Error>
        """
    }

    /// A store's `Retry-After` is read as at most a day, whatever it says (issue 46 item 1): one of
    /// 99999999999999999 seconds crashed every worker that read it.
    @Test func anAbsurdRetryAfterIsReadAsADay() throws {
        let day = Duration.seconds(86_400)
        #expect(UploadRequest.retryAfter("99999999999999999") == day)
        #expect(UploadRequest.retryAfter("184467440737095516150000") == day, "past Int's range")
        #expect(UploadRequest.retryAfter(" 7 ") == .seconds(7))
        #expect(UploadRequest.retryAfter("-5") == nil && UploadRequest.retryAfter("1e9") == nil && UploadRequest.retryAfter("") == nil)
        #expect(UploadRequest.retryAfter("Fri, 31 Dec 9999 23:59:59 GMT") == day)
        let error = try #require(S3ErrorResponse.error(in: Self.answer(503, "<Error><Code>SlowDown</Code></Error>",
                                                                        headers: [("Retry-After", "99999999999999999")]),
                                                      action: "storing"))
        #expect(error.retryAfter == day)
    }

    @Test func theCodeAndMessageAreTheErrorAndNothingElseOfTheXML() throws {
        let error = try #require(S3ErrorResponse.error(
            in: Self.answer(403, Self.errorXML("SignatureDoesNotMatch", "The request signature we calculated does not match &amp; so on.")),
            action: "upload of a.jpg to s3://photos/a.jpg failed"))
        #expect(error.message == "upload of a.jpg to s3://photos/a.jpg failed: HTTP 403 SignatureDoesNotMatch: The request signature we calculated does not match & so on.")
        #expect(error.code == .s3 && error.serviceCode == "SignatureDoesNotMatch" && error.status == 403)
        #expect(error.isPermanent)
        #expect(!error.message.contains("AKIAEXAMPLE") && !error.message.contains("StringToSign") && !error.message.contains("secret-looking"))
    }

    @Test(arguments: [
        (403, "SignatureDoesNotMatch", true), (403, "InvalidAccessKeyId", true), (403, "AccessDenied", true), (404, "NoSuchBucket", true),
        (503, "SlowDown", false), (400, "RequestTimeout", false), (500, "InternalError", false), (503, "ServiceUnavailable", false),
        (409, "SomethingNew", true), (502, "SomethingNew", false),
    ])
    func codesDecideWhetherRetryingHelpsThenTheStatus(status: Int, code: String, permanent: Bool) throws {
        let error = try #require(S3ErrorResponse.error(in: Self.answer(status, Self.errorXML(code, "m")), action: "x failed"))
        #expect(error.isPermanent == permanent, "\(status) \(code)")
    }

    @Test func aSuccessIsNoErrorButA200WithAnErrorBodyIs() throws {
        #expect(S3ErrorResponse.error(in: Self.answer(200, "<InitiateMultipartUploadResult><UploadId>abc</UploadId></InitiateMultipartUploadResult>"),
                                      action: "x") == nil)
        // CompleteMultipartUpload can fail after its 200 has gone out.
        let late = try #require(S3ErrorResponse.error(in: Self.answer(200, Self.errorXML("InternalError", "try again")), action: "x failed"))
        #expect(late.message == "x failed: HTTP 200 InternalError: try again")
        #expect(!late.isPermanent)
    }

    @Test func aBodilessErrorKeepsItsStatusAndRetryAfter() throws {
        let error = try #require(S3ErrorResponse.error(in: Self.answer(503, "", headers: [("Retry-After", "7")]), action: "x failed"))
        #expect(error.message == "x failed: HTTP 503 (empty body)")
        #expect(error.retryAfter == .seconds(7) && !error.isPermanent)
        #expect(try #require(S3ErrorResponse.error(in: Self.answer(403, ""), action: "x failed")).isPermanent)
    }

    @Test func valuesAreReadAndUnescaped() {
        #expect(S3ErrorResponse.value(of: "UploadId", in: "<R><Bucket>b</Bucket><UploadId>a&amp;b&#x41;&#66;&lt;</UploadId></R>") == "a&bAB<")
        #expect(S3ErrorResponse.value(of: "Missing", in: "<R/>") == nil)
        #expect(S3ErrorResponse.escaped("\"e&<>\"") == "&quot;e&amp;&lt;&gt;&quot;")
    }

    @Test func partsGrowSoThatNoFileNeedsMoreThan10000() {
        let preferred = 16 << 20
        #expect(S3Upload.partSize(for: 100 << 20, preferred: preferred) == preferred)
        #expect(S3Upload.partSize(for: Int64(preferred) * 10_000, preferred: preferred) == preferred)
        for size: Int64 in [Int64(preferred) * 10_000 + 1, 1 << 40, 5 << 40] {
            let part = S3Upload.partSize(for: size, preferred: preferred)
            #expect(part > preferred && part % (1 << 20) == 0)
            #expect((size + Int64(part) - 1) / Int64(part) <= 10_000, "\(size) bytes in parts of \(part)")
            #expect(part <= S3Target.maximumPartSize)
        }
    }
}

@Suite struct UploadFileOpS3ParameterTests {
    static func op(_ values: [String: FlowValue]) throws -> UploadFileOp {
        try UploadFileOp(parameters: FlowParameters(values, operation: "UploadFileOp"))
    }

    @Test(arguments: ["secretAccessKey", "accessKeyId", "aws_secret_access_key", "sessionToken", "credentials", "password"])
    func aCredentialCannotBeGivenInAFlowFile(name: String) {
        #expect {
            _ = try Self.op(["url": "s3://photos/", name: "SECRET-VALUE-123"])
        } throws: { error in
            let text = String(describing: error)
            return text.contains(name) && text.contains("AWS_ACCESS_KEY_ID") && !text.contains("SECRET-VALUE-123")
        }
    }

    @Test func signingHeadersAndPostAreRefusedForS3ButNotForHTTP() throws {
        for header in ["Authorization", "x-amz-security-token", "X-Amz-Date", "Host"] {
            #expect(throws: FlowParameterError.self) {
                _ = try Self.op(["url": "s3://photos/", "headers": .map([header: "AWS4-HMAC-SHA256 SECRET"])])
            }
        }
        #expect(throws: FlowParameterError.self) { _ = try Self.op(["url": "s3://photos/", "method": "POST"]) }
        _ = try Self.op(["url": "s3://photos/", "headers": .map(["Content-Type": "image/jpeg", "x-amz-storage-class": "STANDARD_IA"])])
        _ = try Self.op(["url": "http://127.0.0.1/up", "headers": .map(["Authorization": "Bearer t"])])
    }

    /// Workers read their own defaults (region, endpoint): the coordinator sends only what the
    /// flow file gave, and a worker rebuilds the same target from it.
    @Test func workersGetTheS3ParametersAsGiven() throws {
        let op = try Self.op(["url": "s3://photos/2026", "partSize": "8MiB", "skipExisting": true])
        let sent = op.remoteParameters
        #expect(sent["region"] == nil && sent["endpoint"] == nil && sent["pathStyle"] == nil)
        #expect(sent["url"] == "s3://photos/2026" && sent["partSize"] == "8MiB" && sent["skipExisting"] == true)
        let rebuilt = try UploadFileOp(parameters: FlowParameters(sent, operation: "UploadFileOp"))
        #expect(rebuilt.s3Target == op.s3Target && rebuilt.skipsExisting)
        // The Swift API's resolved target travels whole.
        let direct = UploadFileOp(s3: try #require(op.s3Target))
        let again = try UploadFileOp(parameters: FlowParameters(direct.remoteParameters, operation: "UploadFileOp"))
        #expect(again.s3Target == op.s3Target)
    }
}
