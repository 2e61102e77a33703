import Flow
import FlowWire
import Foundation
import Logging

extension PoolStateMachine {
    // MARK: Registration and its caps

    /// Registers a client's run (HELLO, §14.3) with what the pool grants it (§14.5, §14.8): a
    /// share of at most its key's cap, a heartbeat interval of at most 60 s, and a turn at the
    /// workers only while its identity has fewer than `maxRunsPerClient` runs admitted; a run past
    /// that is welcomed but held (WELCOME's bit 2), its tasks waiting until another run ends.
    mutating func register(_ hello: WireHello, peer: Data, key: PeerKey?, now: Instant) -> [Action] {
        let name = hello.clientName.escapingControlCharacters
        let run = hello.runID.escapingControlCharacters
        let identity = key?.text ?? hello.origin.escapingControlCharacters
        let cap = key?.share ?? configuration.maxShare
        let share = Int(min(hello.share, max(1, cap)))
        let heartbeat = min(hello.heartbeatIntervalMilliseconds, Self.maxHeartbeatMilliseconds)
        let admitted = clients.values.filter { $0.identity == identity && !$0.held }.count
        let held = admitted >= configuration.maxRunsPerClient
        nextOrder += 1
        clients[peer] = Client(hello: hello, name: name, lastReceived: now, lastSent: now, heartbeatInterval: .milliseconds(Int64(heartbeat)),
                               since: Date(), identity: identity, share: share, held: held, order: nextOrder)
        fair.open(peer, share: share, held: held)
        var features = WireWelcome.Feature.budgets | WireWelcome.Feature.checkpoints | WireWelcome.Feature.placement
        if held { features |= WireWelcome.Feature.held }
        let welcome = WireWelcome(poolName: configuration.name, features: features, slotCount: configuration.clientCredit,
                                  heartbeatIntervalMilliseconds: heartbeat)
        var actions: [Action] = [
            .send(to: peer, .welcome(welcome)),
            .report(.clientJoined(name: name, run: run, flow: hello.flowName.escapingControlCharacters,
                                  origin: hello.origin.escapingControlCharacters, share: share)),
        ]
        if share < Int(hello.share) {
            let source = key?.share != nil ? "its key's share=\(cap) in --authorized-clients" : "--max-share \(cap)"
            actions.append(.log(.info, "client \(name) (run \(run)) asked for share \(hello.share); granted \(share) (\(source))"))
        }
        if heartbeat < hello.heartbeatIntervalMilliseconds {
            actions.append(.log(.info, "client \(name) (run \(run)) announced a heartbeat interval of \(hello.heartbeatIntervalMilliseconds) ms; "
                + "the pool holds it to \(heartbeat) ms"))
        }
        if held {
            actions.append(.log(.warning, "client \(name) (run \(run)) waits: \(identity) already has \(admitted) runs here "
                + "(--max-runs-per-client \(configuration.maxRunsPerClient)); its tasks start when one of them ends"))
        }
        return actions
    }

    /// A run of `identity` ended: its oldest held run, if any, starts.
    mutating func releaseHeldRun(of identity: String) -> [Action] {
        let admitted = clients.values.filter { $0.identity == identity && !$0.held }.count
        guard admitted < configuration.maxRunsPerClient,
              let (peer, client) = clients.filter({ $0.value.identity == identity && $0.value.held }).min(by: { $0.value.order < $1.value.order })
        else { return [] }
        clients[peer]?.held = false
        fair.release(peer)
        return [.log(.info, "client \(client.name) (run \(client.hello.runID.escapingControlCharacters)) starts: another run of \(identity) ended")]
    }
}
