import ServiceLifecycle
import UnixSignals

/// Calls `reload` on every SIGHUP (re-reading key lists, as daemons do) until graceful shutdown:
/// a `Service` beside the one it reloads in a `ServiceGroup`.
struct HangupReloader: Service {
    let reload: @Sendable () -> Void

    func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            reload()
        }
    }
}

/// A running metrics server as a `Service`: it serves until graceful shutdown, then stops.
struct MetricsService: Service {
    let server: MetricsServer

    func run() async throws {
        try? await gracefulShutdown()
        await server.stop()
    }
}
