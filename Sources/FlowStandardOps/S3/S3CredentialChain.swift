public import Foundation

/// Finds AWS credentials as the AWS tools do, on the machine that runs the op: the environment
/// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), then the shared
/// credentials file (`AWS_SHARED_CREDENTIALS_FILE`, default `~/.aws/credentials`), then the shared
/// config file (`AWS_CONFIG_FILE`, default `~/.aws/config`), for the profile `AWS_PROFILE`
/// (`default` when unset).
///
/// Credentials come only from there: never from a flow file or a task, so they never travel
/// between machines nor reach a summary, a report or a journal.
public struct S3CredentialChain: Sendable {
    /// The environment to read (the process's by default).
    public var environment: [String: String]
    /// The home folder, for `~/.aws`.
    public var home: String

    /// Creates a chain over `environment`.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment,
                home: String = FileManager.default.homeDirectoryForCurrentUser.path) {
        self.environment = environment
        self.home = home
    }

    /// The credentials, or an error that says where they were looked for.
    ///
    /// - Throws: ``S3CredentialError``, naming the variables and files.
    public func resolve() throws(S3CredentialError) -> S3Credentials {
        if let id = value("AWS_ACCESS_KEY_ID") {
            guard let secret = value("AWS_SECRET_ACCESS_KEY") else {
                throw S3CredentialError("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not; set both")
            }
            return S3Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: value("AWS_SESSION_TOKEN"))
        }
        let profile = value("AWS_PROFILE") ?? "default"
        let credentialsFile = value("AWS_SHARED_CREDENTIALS_FILE") ?? home + "/.aws/credentials"
        let configFile = value("AWS_CONFIG_FILE") ?? home + "/.aws/config"
        // The credentials file names sections by profile; the config file, `profile NAME` (but `default`).
        let sources = [(credentialsFile, profile), (configFile, profile == "default" ? "default" : "profile \(profile)")]
        for (file, section) in sources {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8),
                  let values = Self.section(section, of: text),
                  let id = values["aws_access_key_id"] else { continue }
            guard let secret = values["aws_secret_access_key"] else {
                throw S3CredentialError("profile '\(profile)' in \(file) has aws_access_key_id but no aws_secret_access_key")
            }
            return S3Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: values["aws_session_token"])
        }
        throw S3CredentialError("""
            no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones), \
            or give profile '\(profile)' (AWS_PROFILE) in \(credentialsFile) or \(configFile)
            """)
    }

    private func value(_ name: String) -> String? {
        environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The `key = value` pairs of `[name]` in an INI text, keys lowercased.
    static func section(_ name: String, of text: String) -> [String: String]? {
        var current: String?
        var found: [String: String]?
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                current = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                if current == name, found == nil { found = [:] }
                continue
            }
            guard current == name, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            found?[key] = value
        }
        return found
    }
}

/// Credentials that cannot be found. Its text names where they were looked for, never a value.
public struct S3CredentialError: Error, CustomStringConvertible, Sendable {
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
