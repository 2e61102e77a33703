/// How an op takes part in a dry run (``FlowOperation/dryRunRole``): whether it runs, and how.
public enum FlowDryRunRole: String, Sendable, Equatable, CaseIterable {
    /// The op changes something outside the flow's bucket (sends a file, runs a program): a dry
    /// run does not run it and lists its step as not run. The default, so an op that says
    /// nothing is never run by a dry run.
    case writes
    /// The op only reads (lists a folder, hashes a file, logs): a dry run runs it as usual.
    case readsOnly
    /// The op writes, but knows a dry run: a dry run runs it with ``FlowOperation/isDryRun``
    /// true, and it then only reads (for example asks a server whether a file is there) and
    /// notes what it would have done with ``FlowOperation/noteDryRun(_:)``.
    case rehearses
}
