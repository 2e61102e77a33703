import FlowWire
import Foundation
import Logging

extension WorkerStateMachine {
    /// Time passed: time limits, liveness, heartbeats.
    mutating func tick(now: Instant, date: Date) -> [Action] {
        guard isConnected, !isStopped else { return [] }
        var actions: [Action] = []
        // Only watched runs need a look: one past its limit is stopped, one stopped longer than
        // the grace is answered for; in id order.
        let due = watchedRuns == 0 ? [] : runs.compactMap { id, run -> UInt64? in
            guard run.generation == generation, run.isWatched else { return nil }
            let isDue = run.stoppedAt.map { now - $0 >= configuration.stopGrace } ?? run.deadline.map { now >= $0 } ?? false
            return isDue ? id : nil
        }.sorted()
        for id in due {
            guard let run = runs[id] else { continue }
            if run.stoppedAt != nil {
                actions += answerForUnstopped(run: id, now: now, date: date)
            } else {
                runs[id]?.stoppedAt = now
                actions.append(.cancel(run: id))
                actions.append(.log(.info, Self.timeLimitText(run.task), Self.metadata(run.task)))
            }
        }
        let silence = now - lastReceived
        if silence > configuration.heartbeatInterval * configuration.liveness {
            isConnected = false
            if heardSinceConnect {
                // A coordinator that was there went silent without a goodbye.
                actions += endRegistration(because: "the coordinator was silent for \(silence)")
            } else {
                // Nobody answered this connection, so nothing was registered on it. A new socket
                // says READY again, in case the last one reached a coordinator that went away.
                unanswered += 1
                if !awaitingNextCoordinator, !isDraining, unanswered & (unanswered - 1) == 0 {
                    let hint = heardEver ? configuration.silentAgainHint : configuration.noAnswerHint
                    actions.append(.log(.warning, "\(hint) (still trying)", [:]))
                }
            }
            if isDraining {
                // Its running tasks were just discarded, so nothing is left to finish: a new
                // registration would only say READY to say DISCONNECT.
                isStopped = true
                return actions + [.send(.disconnect(reason: "worker stopping")), .log(.info, "stopped", [:]), .stop]
            }
            return actions + [.reconnect]
        }
        if now - lastSent >= configuration.heartbeatInterval {
            lastSent = now
            actions.append(.send(.heartbeat))
        }
        return actions
    }
}
