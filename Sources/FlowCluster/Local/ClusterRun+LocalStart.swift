import Foundation
public import Logging
import Synchronization

extension ClusterRun {
    /// A coordinator on a private endpoint with its local workers booting, started before the flow
    /// file is read (``ClusterRun/startLocal(options:logger:)``): a worker takes about as long to
    /// boot as a small flow file takes to load, so the two overlap. A ``ClusterRun`` made with it
    /// takes it over; when none does (the flow did not load), ``stop()`` ends it.
    public final class LocalStart: Sendable {
        let coordinator: FlowCoordinator
        let pool: LocalWorkerPool
        let relay: ClusterEventRelay
        let logger: Logger
        private let taken = Mutex(false)

        fileprivate init(coordinator: FlowCoordinator, pool: LocalWorkerPool, relay: ClusterEventRelay, logger: Logger) {
            self.coordinator = coordinator
            self.pool = pool
            self.relay = relay
            self.logger = logger
        }

        /// Marks it taken by a run; `false` when a run or ``stop()`` already has.
        func take() -> Bool {
            taken.withLock { taken in
                defer { taken = true }
                return !taken
            }
        }

        /// Stops the workers and the coordinator, unless a run has taken them over (the run stops
        /// them then); returns once they have ended.
        public func stop() async {
            guard take() else { return }
            await pool.stop()
            await coordinator.stop()
            PrivateEndpoint.remove(coordinator.endpoint)
        }
    }

    /// Binds a private endpoint and starts the local workers, for a run whose flow is still to be
    /// read; pass the result to ``init(definition:options:logger:localStart:onEvent:)``.
    ///
    /// - Parameters:
    ///   - options: the run's options; `bind` must be `nil`.
    ///   - logger: the run's logger.
    /// - Throws: ``ClusterError`` when the endpoint cannot be bound or the workers cannot start.
    public static func startLocal(options: Options, logger: Logger) async throws -> LocalStart {
        precondition(options.bind == nil, "startLocal is for local workers (no bind)")
        return try await launchLocal(options: options, logger: runLogger(logger))
    }

    /// ``startLocal(options:logger:)`` with the run's logger as it is.
    static func launchLocal(options: Options, logger: Logger) async throws -> LocalStart {
        let relay = ClusterEventRelay()
        let coordinator = try FlowCoordinator(configuration: coordinatorConfiguration(options), logger: logger) { event in
            relay.deliver(event)
        }
        let endpoint = try await coordinator.start()
        do {
            let pool = try LocalWorkerPool(count: options.workers, endpoint: endpoint, concurrency: options.concurrency,
                                           executable: options.workerExecutable, logger: logger)
            return LocalStart(coordinator: coordinator, pool: pool, relay: relay, logger: logger)
        } catch {
            await coordinator.stop()
            PrivateEndpoint.remove(endpoint)
            throw error
        }
    }
}
