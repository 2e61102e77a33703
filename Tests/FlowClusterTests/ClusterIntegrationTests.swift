import Testing

/// Every multi-process test of the cluster: real `flow-coordinator` and `flow-worker` programs
/// talking over loopback, each within a minute, in two lanes: this one and
/// ``ClusterIntegrationTestsSecondLane``. In each lane one test runs at a time (two cores, many
/// processes); the lanes run beside each other. Such a test mostly waits (for a process to start,
/// a heartbeat, a worker to be declared lost): one lane alone kept a fifth of two cores busy, and
/// took 138 s of the main suite's 186. The suites are split between the lanes by their time.
@Suite(.serialized, .timeLimit(.minutes(1)))
enum ClusterIntegrationTests {}

/// The second lane of ``ClusterIntegrationTests``: the same rules, its own suites.
@Suite(.serialized, .timeLimit(.minutes(1)))
enum ClusterIntegrationTestsSecondLane {
    // Helpers of the first lane's suites that this lane's tests use by their short names.
    typealias S3Uploads = ClusterIntegrationTests.S3Uploads
    typealias VerifyCommand = ClusterIntegrationTests.VerifyCommand
}
