import Foundation

/// The AWS tools' checksum switches, read as the AWS SDKs read them on the machine that runs the
/// op: `AWS_REQUEST_CHECKSUM_CALCULATION` and `AWS_RESPONSE_CHECKSUM_VALIDATION` in the
/// environment, else `request_checksum_calculation` and `response_checksum_validation` in the
/// profile's section of the shared config file (`AWS_CONFIG_FILE`, default `~/.aws/config`;
/// profile `AWS_PROFILE`, default `default`).
///
/// - `request_checksum_calculation = when_supported` (the default): an upload whose flow names no
///   `checksum` sends one (CRC64NVME, falling back where the store refuses the trailer form);
///   `when_required`: it sends none (`PutObject` and `UploadPart` do not require one). A
///   `checksum:` the flow names is sent either way, as the SDKs send an algorithm asked for.
/// - `response_checksum_validation = when_supported` (the default): a `HEAD` or `GET` of an
///   object asks for its stored checksum (`x-amz-checksum-mode: ENABLED`); `when_required`: it
///   does not, and `skipExisting: checksum` and `verify` compare what else they can.
struct S3ChecksumSettings: Sendable, Equatable {
    /// Whether an upload whose flow names no checksum sends one.
    var calculatesWhenSupported = true
    /// Whether reads ask for the stored checksum.
    var validatesWhenSupported = true

    init(calculatesWhenSupported: Bool, validatesWhenSupported: Bool) {
        self.calculatesWhenSupported = calculatesWhenSupported
        self.validatesWhenSupported = validatesWhenSupported
    }

    /// The settings of this machine.
    ///
    /// - Throws: ``S3CredentialError`` (a configuration error) for a value that is neither
    ///   `when_supported` nor `when_required`, naming where it was read.
    static func read(environment: [String: String] = ProcessInfo.processInfo.environment,
                     home: String = FileManager.default.homeDirectoryForCurrentUser.path) throws(S3CredentialError) -> S3ChecksumSettings {
        let profile = environment["AWS_PROFILE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
        let configFile = environment["AWS_CONFIG_FILE"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.aws/config"
        let section = (try? String(contentsOfFile: configFile, encoding: .utf8))
            .flatMap { S3CredentialChain.section(profile == "default" ? "default" : "profile \(profile)", of: $0) } ?? [:]
        func read(_ variable: String, _ key: String) throws(S3CredentialError) -> Bool {
            if let value = environment[variable], !value.isEmpty { return try Self.whenSupported(value, where: variable) }
            if let value = section[key] { return try Self.whenSupported(value, where: "\(key) in \(configFile)") }
            return true
        }
        return S3ChecksumSettings(calculatesWhenSupported: try read("AWS_REQUEST_CHECKSUM_CALCULATION", "request_checksum_calculation"),
                                  validatesWhenSupported: try read("AWS_RESPONSE_CHECKSUM_VALIDATION", "response_checksum_validation"))
    }

    private static func whenSupported(_ value: String, where place: String) throws(S3CredentialError) -> Bool {
        switch value.lowercased() {
        case "when_supported": return true
        case "when_required": return false
        default: throw S3CredentialError("\(place) is '\(value.prefix(40))': it must be when_supported or when_required")
        }
    }
}
