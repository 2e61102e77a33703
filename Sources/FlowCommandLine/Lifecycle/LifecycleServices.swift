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

/// A helper that runs on its own (a timer, a socket's thread) as a `Service`: it waits for
/// graceful shutdown, then calls `stop` and waits for it.
struct StoppingService: Service {
    let stop: @Sendable () async -> Void

    func run() async throws {
        try? await gracefulShutdown()
        await stop()
    }
}

/// Ctrl-C for a run as a `Service`: the first SIGINT or SIGTERM cancels the flow (its summary is
/// still printed), a second exits at once; once the run is ending they are let be.
struct InterruptService: Service {
    let isEnding: @Sendable () -> Bool
    let onInterrupt: @Sendable () -> Void

    /// Ignores SIGINT and SIGTERM from now on, until ``run()`` traps them: one meanwhile must not
    /// kill the run without its summary.
    init(isEnding: @escaping @Sendable () -> Bool, onInterrupt: @escaping @Sendable () -> Void) {
        InterruptHandler.ignoreUntilTrapped()
        self.isEnding = isEnding
        self.onInterrupt = onInterrupt
    }

    func run() async throws {
        var seen = 0
        for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm).cancelOnGracefulShutdown() where !isEnding() {
            seen += 1
            InterruptHandler.interrupted(times: seen, onInterrupt)
        }
    }
}
