import FlowCluster

/// What a test starts and must stop however it ends: a coordinator or a pool. Their `stop()` is
/// `async` (it returns once the I/O thread has ended, resumed by it), and Swift has no `await` in
/// `defer`, so a test scopes them with ``withStarted(_:_:)`` instead of `defer { x.stop() }`.
protocol StartedServer: Sendable {
    func start() async throws -> String
    func stop() async
}

extension FlowCoordinator: StartedServer {}
extension FlowPool: StartedServer {}

/// Starts `server`, runs `body` with its bound endpoint, and stops it on every way out of `body`
/// (returned or thrown), waiting for its I/O thread to end.
func withStarted<Server: StartedServer, Value>(_ server: Server, _ body: (_ endpoint: String) async throws -> Value) async throws -> Value {
    let endpoint: String
    do {
        endpoint = try await server.start()
    } catch {
        await server.stop()
        throw error
    }
    let value: Value
    do {
        value = try await body(endpoint)
    } catch {
        await server.stop()
        throw error
    }
    await server.stop()
    return value
}
