import FlowStandardOps
import FlowTestSupport
import Foundation
import Testing

@Suite struct S3CredentialChainTests {
    static func home() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aws-home-\(UUID())")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent(".aws"), withIntermediateDirectories: true)
        try """
            # keys of two profiles
            [default]
            aws_access_key_id = AKIDDEFAULT
            aws_secret_access_key = default/secret

            [uploads]
            aws_access_key_id=AKIDUPLOADS
            aws_secret_access_key=uploads+secret
            aws_session_token = FwoGZXIvYXdzEuploads
            """.write(to: folder.appendingPathComponent(".aws/credentials"), atomically: true, encoding: .utf8)
        try """
            [default]
            region = eu-west-1
            [profile from-config]
            aws_access_key_id = AKIDCONFIG
            aws_secret_access_key = config-secret
            """.write(to: folder.appendingPathComponent(".aws/config"), atomically: true, encoding: .utf8)
        return folder.path
    }

    @Test func theEnvironmentComesFirst() throws {
        let home = try Self.home()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let chain = S3CredentialChain(environment: ["AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "env-secret",
                                                    "AWS_SESSION_TOKEN": "env-token", "AWS_PROFILE": "uploads"], home: home)
        #expect(try chain.resolve() == S3Credentials(accessKeyID: "AKIDENV", secretAccessKey: "env-secret", sessionToken: "env-token"))
    }

    @Test func thenTheSharedFilesWithTheProfile() throws {
        let home = try Self.home()
        defer { try? FileManager.default.removeItem(atPath: home) }
        #expect(try S3CredentialChain(environment: [:], home: home).resolve()
                == S3Credentials(accessKeyID: "AKIDDEFAULT", secretAccessKey: "default/secret"))
        #expect(try S3CredentialChain(environment: ["AWS_PROFILE": "uploads"], home: home).resolve()
                == S3Credentials(accessKeyID: "AKIDUPLOADS", secretAccessKey: "uploads+secret", sessionToken: "FwoGZXIvYXdzEuploads"))
        #expect(try S3CredentialChain(environment: ["AWS_PROFILE": "from-config"], home: home).resolve()
                == S3Credentials(accessKeyID: "AKIDCONFIG", secretAccessKey: "config-secret"))
        let moved = home + "/elsewhere"
        try FileManager.default.moveItem(atPath: home + "/.aws/credentials", toPath: moved)
        #expect(try S3CredentialChain(environment: ["AWS_SHARED_CREDENTIALS_FILE": moved, "AWS_PROFILE": "uploads"], home: home).resolve()
                .accessKeyID == "AKIDUPLOADS")
    }

    @Test func missingCredentialsNameWhereTheyWereLookedForAndNoValue() throws {
        let home = try Self.home()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let missing = try #require(throws: S3CredentialError.self) {
            try S3CredentialChain(environment: ["AWS_PROFILE": "nobody"], home: home).resolve()
        }
        let text = String(describing: missing)
        #expect(text.contains("AWS_ACCESS_KEY_ID") && text.contains("AWS_SECRET_ACCESS_KEY") && text.contains("profile 'nobody'"), "\(text)")
        #expect(text.contains(home + "/.aws/credentials"))
        let half = try #require(throws: S3CredentialError.self) {
            try S3CredentialChain(environment: ["AWS_ACCESS_KEY_ID": "AKIDHALF"], home: home).resolve()
        }
        #expect(String(describing: half).contains("AWS_SECRET_ACCESS_KEY is not"))
        for error in [text, String(describing: half)] {
            #expect(!error.contains("default/secret") && !error.contains("uploads+secret") && !error.contains("config-secret"),
                    "no secret value in \(error)")
        }
    }
}
