import Flow
import FlowStandardOps
import Foundation
import Testing

@Suite struct S3TargetTests {
    static func target(_ values: [String: FlowValue], environment: [String: String] = [:]) throws -> S3Target {
        try S3Target(parameters: FlowParameters(values, operation: "UploadFileOp"), environment: environment)
    }

    @Test func awsByDefaultWithTheBucketInTheHostName() throws {
        let target = try Self.target(["url": "s3://photos/2026/"])
        #expect(target.bucket == "photos" && target.keyPrefix == "2026/")
        #expect(target.region == "us-east-1")
        #expect(target.endpoint.absoluteString == "https://s3.us-east-1.amazonaws.com")
        #expect(!target.pathStyle)
        #expect(target.partSize == 16 << 20 && target.partConcurrency == 4)
        let location = target.location(key: target.key(forFileNamed: "a b.jpg"))
        #expect(location.host == "photos.s3.us-east-1.amazonaws.com")
        #expect(location.path == "/2026/a%20b.jpg")
        #expect(target.objectURI(key: target.key(forFileNamed: "a b.jpg")) == "s3://photos/2026/a b.jpg")
    }

    @Test func anEndpointMeansPathStyleAndTheEnvironmentGivesDefaults() throws {
        let target = try Self.target(["url": "s3://my-bucket", "partSize": "8MiB", "partConcurrency": 2],
                                     environment: ["AWS_REGION": "eu-west-1", "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9000"])
        #expect(target.region == "eu-west-1")
        #expect(target.pathStyle)
        #expect(target.keyPrefix.isEmpty && target.key(forFileNamed: "x.bin") == "x.bin")
        let location = target.location(key: "dir/ü.bin")
        #expect(location.host == "127.0.0.1:9000" && location.path == "/my-bucket/dir/%C3%BC.bin")
        #expect(location.url.absoluteString == "http://127.0.0.1:9000/my-bucket/dir/%C3%BC.bin")
        #expect(target.partSize == 8 << 20 && target.partConcurrency == 2)
        // The parameter wins over the environment, and AWS_DEFAULT_REGION stands in for AWS_REGION.
        #expect(try Self.target(["url": "s3://b-1", "region": "ap-south-1"], environment: ["AWS_REGION": "eu-west-1"]).region == "ap-south-1")
        #expect(try Self.target(["url": "s3://b-1"], environment: ["AWS_DEFAULT_REGION": "sa-east-1"]).region == "sa-east-1")
        #expect(try Self.target(["url": "s3://b-1"], environment: ["AWS_ENDPOINT_URL": "https://r2.example:8443/base/"])
                .location(key: "k").url.absoluteString == "https://r2.example:8443/base/b-1/k")
    }

    @Test(arguments: [
        (["url": "https://host/x"], "url", "must start with s3://"),
        (["url": "s3://Bad_Bucket/x"], "url", "is not a bucket name"),
        (["url": "s3://ok-bucket", "endpoint": "ftp://x"], "endpoint", "must be an http:// or https:// URL"),
        (["url": "s3://ok-bucket", "partSize": "1MiB"], "partSize", "between 5MiB and 5GiB"),
        (["url": "s3://ok-bucket", "partSize": "lots"], "partSize", "must be a size like 16MiB"),
        (["url": "s3://ok-bucket", "partConcurrency": 0], "partConcurrency", "must be 1 to 64"),
        (["url": "s3://dotted.bucket", "pathStyle": false], "pathStyle", "must be true for bucket 'dotted.bucket'"),
    ] as [([String: FlowValue], String, String)])
    func badParametersAreNamed(_ values: [String: FlowValue], _ parameter: String, _ message: String) throws {
        let error = try #require(throws: FlowParameterError.self) { try Self.target(values) }
        #expect(error.parameter == parameter)
        #expect(error.message.contains(message), "\(error)")
    }

    @Test func sizesTakeBinaryAndDecimalUnits() throws {
        #expect(try Self.target(["url": "s3://b-1", "partSize": "1GiB"]).partSize == 1 << 30)
        #expect(try Self.target(["url": "s3://b-1", "partSize": "6MB"]).partSize == 6_000_000)
        #expect(try Self.target(["url": "s3://b-1", "partSize": 5_242_880]).partSize == 5 << 20)
        #expect(try Self.target(["url": "s3://b-1", "partSize": "5.5MiB"]).partSize == 5_767_168)
    }
}
