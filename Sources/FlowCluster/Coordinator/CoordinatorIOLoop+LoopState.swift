import Foundation
import ZeroMQ

extension CoordinatorIOLoop {
    /// What the loop keeps from turn to turn: the run's state machine, the sockets it polls (with
    /// when the next tick is due) and its count of malformed traffic.
    struct LoopState {
        var machine: Machine
        var sockets: RouterSockets
        var malformed: MalformedTraffic
        /// The worker table's generation last shown in ``CoordinatorMailbox/connectedWorkers``.
        var shownWorkers: UInt64 = .max

        init(router: ZMQSocket, monitor: ZMQSocket?, wakeup: ZMQWakeup, configuration: FlowCoordinator.Configuration,
             now: ContinuousClock.Instant) {
            machine = Machine(configuration: .init(
                liveness: configuration.liveness, workerTimeout: configuration.workerTimeout, maxAttempts: configuration.maxAttempts,
                answerGrace: configuration.answerGrace, unansweredBeforeQuarantine: configuration.unansweredBeforeQuarantine),
                pool: configuration.pool?.endpoint, now: now)
            sockets = RouterSockets(router: router, monitor: monitor, wakeup: wakeup, heartbeatInterval: configuration.heartbeatInterval, now: now)
            malformed = MalformedTraffic(heartbeatInterval: configuration.heartbeatInterval)
        }

        /// A pool link that said HELLO again on a new socket: poll that one from now on.
        mutating func followReplacedSocket(of link: PoolLink?) {
            guard let link, link.replaced else { return }
            link.replaced = false
            sockets.replaceRouter(with: link.socket)
        }
    }
}
