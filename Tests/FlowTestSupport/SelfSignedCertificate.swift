import Foundation

/// A self-signed certificate for `localhost` and 127.0.0.1 and its key, as PEM files in a
/// temporary folder, made with the `openssl` program: what a server no client trusts presents.
public struct SelfSignedCertificate: Sendable {
    /// The certificate's PEM file.
    public let certificate: String
    /// The private key's PEM file.
    public let key: String
    private let folder: TemporaryDirectory

    /// Makes the pair; `openssl` is waited for off the cooperative pool (``TestCommand/run(_:timeout:)``).
    ///
    /// - Throws: ``TestSupportError`` when `openssl` is missing (`scripts/test` installs it) or fails.
    public init() async throws {
        folder = try TemporaryDirectory(prefix: "tls")
        certificate = folder.file("certificate.pem").path
        key = folder.file("key.pem").path
        let result = try await TestCommand.run([
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", certificate,
        ])
        guard result.status == 0 else { throw TestSupportError("openssl could not make a certificate: \(result.output)") }
    }
}
