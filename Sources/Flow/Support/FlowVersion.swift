/// This Flow's version: `flow-coordinator --version`, `flow-worker --version`, and the
/// `User-Agent: flow/VERSION` of every HTTP and S3 request its ops send (a store's operator can
/// tell Flow's traffic from anyone's).
package enum FlowVersion {
    /// The version, `MAJOR.MINOR.PATCH`.
    package static let current = "0.9.0"
}
