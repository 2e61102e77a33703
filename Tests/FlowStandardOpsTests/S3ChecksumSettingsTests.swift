import FlowTestSupport
import Foundation
import Testing
@testable import FlowStandardOps

/// `AWS_REQUEST_CHECKSUM_CALCULATION` and `AWS_RESPONSE_CHECKSUM_VALIDATION`, and the same keys in
/// the shared config file, read as the AWS SDKs read them (issue 47 item 2).
@Suite struct S3ChecksumSettingsTests {
    @Test func theEnvironmentThenTheProfileThenTheDefault() throws {
        let scratch = try TemporaryDirectory(prefix: "aws-config")
        let config = scratch.file("config")
        try """
            [default]
            response_checksum_validation = when_required
            [profile ceph]
            request_checksum_calculation = WHEN_REQUIRED
            """.write(to: config, atomically: true, encoding: .utf8)
        let none = try S3ChecksumSettings.read(environment: [:], home: scratch.url.path)
        #expect(none == S3ChecksumSettings(calculatesWhenSupported: true, validatesWhenSupported: true))
        let byDefaultProfile = try S3ChecksumSettings.read(environment: ["AWS_CONFIG_FILE": config.path], home: "/nonexistent")
        #expect(byDefaultProfile == S3ChecksumSettings(calculatesWhenSupported: true, validatesWhenSupported: false))
        let byProfile = try S3ChecksumSettings.read(environment: ["AWS_CONFIG_FILE": config.path, "AWS_PROFILE": "ceph"], home: "/nonexistent")
        #expect(byProfile == S3ChecksumSettings(calculatesWhenSupported: false, validatesWhenSupported: true))
        let byEnvironment = try S3ChecksumSettings.read(environment: ["AWS_CONFIG_FILE": config.path, "AWS_PROFILE": "ceph",
                                                                     "AWS_REQUEST_CHECKSUM_CALCULATION": "when_supported",
                                                                     "AWS_RESPONSE_CHECKSUM_VALIDATION": "when_required"], home: "/nonexistent")
        #expect(byEnvironment == S3ChecksumSettings(calculatesWhenSupported: true, validatesWhenSupported: false))
        #expect(throws: S3CredentialError.self) {
            try S3ChecksumSettings.read(environment: ["AWS_REQUEST_CHECKSUM_CALCULATION": "sometimes"], home: "/nonexistent")
        }
    }
}
