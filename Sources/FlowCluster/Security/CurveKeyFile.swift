import Foundation
public import ZeroMQ

/// A CURVE key pair in a file of its own: the coordinator's or a worker's long-term identity.
///
/// The format is text, one `name = value` per line, `#` starting a comment:
///
/// ```
/// # Flow CURVE key pair (CurveZMQ, Z85). Keep this file secret: it is this machine's identity.
/// public-key = rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7
/// secret-key = JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6
/// ```
///
/// A key file is made with mode 0600 and never overwritten; reading one checks that its public
/// key is the one its secret key gives.
public enum CurveKeyFile {
    /// Makes a new key pair and writes it to `path`.
    ///
    /// - Throws: ``CurveKeyFileError`` when the file exists, cannot be made, or CURVE is missing.
    /// - Returns: the key pair.
    @discardableResult
    public static func generate(at path: String) throws(CurveKeyFileError) -> ZMQCurveKeyPair {
        var pair: ZMQCurveKeyPair
        do {
            // A key that starts with `-` reads as an option on a command line
            // (`--coordinator-key -a%=…`): such keys are drawn again (1 in 85).
            repeat {
                pair = try ZMQCurveKeyPair.generate()
            } while pair.publicKey.hasPrefix("-")
        } catch {
            throw CurveKeyFileError(path: path, "cannot make a key pair: \(error) (libzmq without CURVE?)")
        }
        let text = """
            # Flow CURVE key pair (CurveZMQ, Z85). Keep this file secret: it is this machine's identity.
            # Give the public key to the other side: a worker's to the coordinator's --authorized-keys
            # file, the coordinator's to each worker's --coordinator-key.
            public-key = \(pair.publicKey)
            secret-key = \(pair.secretKey)

            """
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            if code == EEXIST { throw CurveKeyFileError(path: path, "a file is already there; a key file is never overwritten") }
            throw CurveKeyFileError(path: path, "cannot make it: \(String(cString: strerror(code)))")
        }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(descriptor) == 0 else {
            let code = errno
            unlink(path)
            throw CurveKeyFileError(path: path, "cannot write it: \(String(cString: strerror(code)))")
        }
        return pair
    }

    /// Reads a key pair written by ``generate(at:)``.
    ///
    /// - Throws: ``CurveKeyFileError`` naming the file and line of what is wrong.
    public static func read(at path: String) throws(CurveKeyFileError) -> ZMQCurveKeyPair {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw CurveKeyFileError(path: path, "cannot read it: \(String(cString: strerror(errno)))")
        }
        var values: [String: (value: String, line: Int)] = [:]
        for (offset, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, ["public-key", "secret-key"].contains(parts[0]) else {
                throw CurveKeyFileError(path: path, line: offset + 1, "expected 'public-key = KEY' or 'secret-key = KEY'")
            }
            values[parts[0]] = (parts[1], offset + 1)
        }
        guard let secret = values["secret-key"] else { throw CurveKeyFileError(path: path, "no 'secret-key = KEY' line: not a key file made by keygen") }
        guard CurveKey.isValid(secret.value) else {
            throw CurveKeyFileError(path: path, line: secret.line, "the secret key is not 40 Z85 characters")
        }
        let pair: ZMQCurveKeyPair
        do {
            pair = try ZMQCurveKeyPair(secretKey: secret.value)
        } catch {
            throw CurveKeyFileError(path: path, line: secret.line, "not a CURVE secret key: \(error)")
        }
        if let stated = values["public-key"], stated.value != pair.publicKey {
            throw CurveKeyFileError(path: path, line: stated.line, "the public key is not the one the secret key gives (\(pair.publicKey))")
        }
        return pair
    }
}

/// CURVE public keys as text.
public enum CurveKey {
    /// The Z85 alphabet (ZeroMQ RFC 32).
    static let alphabet = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#")

    /// Whether `text` is a key: 40 characters of Z85.
    public static func isValid(_ text: String) -> Bool {
        text.count == 40 && text.allSatisfy { alphabet.contains($0) }
    }
}

/// A key file that cannot be made or read.
public struct CurveKeyFileError: Error, CustomStringConvertible, Sendable {
    /// The file.
    public var path: String
    /// The line, when one is to blame.
    public var line: Int?
    /// What is wrong.
    public var message: String

    /// Creates an error.
    public init(path: String, line: Int? = nil, _ message: String) {
        self.path = path
        self.line = line
        self.message = message
    }

    public var description: String {
        "\(path)\(line.map { ":\($0)" } ?? ""): \(message)"
    }
}
