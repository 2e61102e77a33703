/// Who may join a CURVE pool (docs/PROTOCOL.md §14.7): the workers' keys (`--authorized-keys`)
/// and the clients' keys (`--authorized-clients`). A key's list decides its role: a worker key
/// cannot submit runs, a client key cannot register as a worker.
public struct PoolKeys: Sendable, Equatable {
    /// Keys that may register as workers (READY).
    public var workers: AuthorizedKeys
    /// Keys that may register runs (HELLO).
    public var clients: AuthorizedKeys

    /// Creates the lists.
    public init(workers: AuthorizedKeys, clients: AuthorizedKeys) {
        self.workers = workers
        self.clients = clients
    }

    /// Every key the ZAP handler admits to a handshake.
    var union: AuthorizedKeys {
        AuthorizedKeys(names: workers.names.merging(clients.names) { worker, _ in worker })
    }

    /// The key as the pool's state machine knows it: the share its clients line grants, if any.
    func peerKey(_ key: String) -> PoolStateMachine.PeerKey {
        PoolStateMachine.PeerKey(text: key, share: clients.shares[key])
    }

    /// What `key` may be.
    func roles(of key: String) -> PoolStateMachine.Roles {
        var roles: PoolStateMachine.Roles = []
        if workers.admits(key) { roles.insert(.worker) }
        if clients.admits(key) { roles.insert(.client) }
        return roles
    }
}
