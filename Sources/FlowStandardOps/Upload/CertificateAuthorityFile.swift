import NIOSSL

/// Certificate authorities an upload trusts besides the machine's own: `UploadFileOp`'s `caFile`,
/// for a server whose certificate comes from a private authority (an internal MinIO or nginx), as
/// `curl --cacert` and `rclone --ca-cert` take one.
enum CertificateAuthorityFile {
    /// The most a CA file may hold; Debian's whole bundle of public authorities is about 220 KB.
    static let sizeLimit = 16 << 20

    /// The TLS settings that trust the authorities in the PEM file at `path` as well as the
    /// system's. The file is read here, through ``ReadableFile`` (a named pipe or a folder is
    /// refused, never waited on), so a missing or unusable one fails at once and by name instead
    /// of as a handshake error. Settings made from the same file are equal, so every upload with
    /// it shares one connection pool.
    ///
    /// - Throws: ``FlowStandardOpError`` with ``FlowStandardOpError/Code/unreadableFile``
    ///   (permanent): the file cannot be read or holds no PEM certificate.
    static func tlsConfiguration(path: String) throws -> TLSConfiguration {
        let bytes: [UInt8]
        do {
            let file = try ReadableFile(path: path)
            guard file.size <= sizeLimit else {
                throw FlowStandardOpError(.unreadableFile, "cannot read \(path): \(file.size) bytes is too big for a CA file")
            }
            bytes = Array(try file.readAll())
        } catch let error as FlowStandardOpError {
            throw FlowStandardOpError(.unreadableFile, "caFile: \(error.message)")
        }
        let certificates = (try? NIOSSLCertificate.fromPEMBytes(bytes)) ?? []
        guard !certificates.isEmpty else {
            throw FlowStandardOpError(.unreadableFile, "caFile: \(path) holds no PEM certificate (-----BEGIN CERTIFICATE----- ...)")
        }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.additionalTrustRoots = [.certificates(certificates)]
        return configuration
    }
}
