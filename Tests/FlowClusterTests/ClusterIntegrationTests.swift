import Testing

/// Every multi-process test of the cluster: real `flow-coordinator` and `flow-worker` programs
/// talking over loopback. One at a time (two cores, many processes), each within a minute.
@Suite(.serialized, .timeLimit(.minutes(1)))
enum ClusterIntegrationTests {}
