/// A libzmq version, e.g. 4.3.4.
public struct ZMQVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The major version.
    public let major: Int
    /// The minor version.
    public let minor: Int
    /// The patch level.
    public let patch: Int

    /// Creates a version.
    ///
    /// - Parameters:
    ///   - major: The major version.
    ///   - minor: The minor version.
    ///   - patch: The patch level.
    public init(major: Int, minor: Int, patch: Int) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    /// Orders versions by major, then minor, then patch.
    ///
    /// - Parameters:
    ///   - lhs: A version.
    ///   - rhs: Another version.
    /// - Returns: Whether `lhs` is older.
    public static func < (lhs: ZMQVersion, rhs: ZMQVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }

    /// The dotted form, e.g. `4.3.4`.
    public var description: String {
        "\(major).\(minor).\(patch)"
    }
}
