import Foundation
import ZeroMQ

extension CoordinatorIOLoop {
    /// What the loop keeps from turn to turn: the state machine, the sockets it polls and when
    /// the next tick is due.
    struct LoopState {
        var machine: Machine
        var router: ZMQSocket
        let poller = ZMQPoller()
        var routerIndex: Int
        let wakeupIndex: Int
        let monitor: ZMQSocket?
        let monitorIndex: Int?
        var failedHandshakes = HandshakeFailureLog()
        var malformed: MalformedTraffic
        let tickInterval: Duration
        var nextTick: ContinuousClock.Instant

        init(router: ZMQSocket, monitor: ZMQSocket?, wakeup: ZMQWakeup, configuration: FlowCoordinator.Configuration,
             now: ContinuousClock.Instant) {
            machine = Machine(configuration: .init(
                liveness: configuration.liveness, workerTimeout: configuration.workerTimeout, maxAttempts: configuration.maxAttempts,
                answerGrace: configuration.answerGrace, unansweredBeforeQuarantine: configuration.unansweredBeforeQuarantine))
            self.router = router
            routerIndex = poller.register(router)
            wakeupIndex = poller.register(wakeup)
            self.monitor = monitor
            monitorIndex = monitor.map { [poller] in poller.register($0) }
            malformed = MalformedTraffic(heartbeatInterval: configuration.heartbeatInterval)
            tickInterval = min(.milliseconds(50), configuration.heartbeatInterval / 4)
            nextTick = now
        }

        /// A pool link that said HELLO again on a new socket: poll that one from now on.
        mutating func followReplacedSocket(of link: PoolLink?) {
            guard let link, link.replaced else { return }
            link.replaced = false
            poller.unregister(router)
            router = link.socket
            routerIndex = poller.register(router)
        }
    }
}
