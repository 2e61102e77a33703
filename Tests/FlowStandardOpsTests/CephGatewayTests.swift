import AsyncHTTPClient
import FlowStandardOps
import FlowTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// The Ceph harness itself: a real radosgw answers, checks signatures, and keeps each test's
/// bucket apart. "S3" in the name puts it in scripts/test's S3 phase.
@Suite struct S3CephGatewayTests {
    /// Sends one request signed by Flow's `SigV4Signer`, the body's SHA-256 signed too.
    static func send(_ method: HTTPMethod, _ path: String, body: Data = Data(), to s3: CephRGWServer,
                     secret: String? = nil) async throws -> (status: UInt, body: Data) {
        let host = String(s3.endpoint.dropFirst("http://".count))
        let payloadFile = s3.scratch.file(UUID().uuidString)
        try body.write(to: payloadFile)
        defer { try? FileManager.default.removeItem(at: payloadFile) }
        let signer = SigV4Signer(credentials: S3Credentials(accessKeyID: s3.accessKeyID, secretAccessKey: secret ?? s3.secretAccessKey),
                                 region: "us-east-1")
        let headers = signer.sign(method: method.rawValue, host: host, path: path, query: [], headers: [],
                                  payloadHash: try await TestCommand.sha256sum(payloadFile.path), date: Date())
        var request = HTTPClientRequest(url: s3.endpoint + path)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if !body.isEmpty { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let received = try await response.body.collect(upTo: 64 << 20)
        return (response.status.code, Data(received.readableBytesView))
    }

    @Test func anObjectPutWithFlowsSignatureComesBackByteForByte() async throws {
        let s3 = try await CephRGWServer(bucket: "harness")
        defer { s3.stop() }
        let file = s3.scratch.file("source.bin")
        try PseudoRandomFile.write(to: file, size: 3 << 20)
        let bytes = try Data(contentsOf: file)
        // `+`, a space and a non-ASCII letter: the characters whose signing stores get wrong.
        let key = "2026/a+b é.bin"
        let path = SigV4Signer.encodePath("/\(s3.bucket)/\(key)")

        let put = try await Self.send(.PUT, path, body: bytes, to: s3)
        #expect(put.status == 200, "\(String(decoding: put.body, as: UTF8.self))")
        let get = try await Self.send(.GET, path, to: s3)
        #expect(get.status == 200)
        #expect(get.body == bytes)
        #expect(try await s3.object(key) == bytes, "boto3 reads back what Flow's signer stored")
        #expect(try await s3.objects() == [key: bytes.count])
    }

    @Test func aRequestSignedWithTheWrongSecretIsRefused() async throws {
        let s3 = try await CephRGWServer(bucket: "harness")
        defer { s3.stop() }
        let refused = try await Self.send(.PUT, "/\(s3.bucket)/refused.txt", body: Data("no".utf8), to: s3, secret: "not-the-secret")
        #expect(refused.status == 403)
        #expect(String(decoding: refused.body, as: UTF8.self).contains("SignatureDoesNotMatch"))
        #expect(try await s3.objects().isEmpty)
    }

    @Test func eachServerHasItsOwnBucketOnOneGatewayAndStopRemovesIt() async throws {
        let first = try await CephRGWServer(bucket: "harness")
        let second = try await CephRGWServer(bucket: "harness")
        defer { second.stop() }
        #expect(first.endpoint == second.endpoint)
        #expect(first.bucket != second.bucket)
        let put = try await Self.send(.PUT, "/\(first.bucket)/only-here.txt", body: Data("first".utf8), to: first)
        #expect(put.status == 200)
        #expect(try await first.objects() == ["only-here.txt": 5])
        #expect(try await second.objects().isEmpty)

        first.stop()
        let gone = try await Self.send(.GET, "/\(first.bucket)/only-here.txt", to: second)
        #expect(String(decoding: gone.body, as: UTF8.self).contains("NoSuchBucket"), "status \(gone.status)")
    }

    /// A cluster of its own whose owner is a `sleep`: killing the owner must stop every daemon
    /// and remove the folder (a test run killed outright leaves nothing behind), which the
    /// shared gateway relies on.
    @Test func aGatewayWhoseOwnerDiesIsStoppedAndRemoved() async throws {
        let parent = try TemporaryDirectory(prefix: "ceph-owner")
        defer { parent.remove() }
        let folder = parent.file("cluster").path
        let owner = Process()
        owner.executableURL = URL(fileURLWithPath: "/bin/sleep")
        owner.arguments = ["600"]
        let ownerExit = try ProcessLaunch.run(owner)
        let started = try await TestCommand.run(["env", "CEPH_RGW_OWNER_PID=\(owner.processIdentifier)", CephRGWServer.script, "start", folder])
        #expect(started.output.hasPrefix("endpoint=http://127.0.0.1:"), "\(started.output)")
        let recorded = try String(contentsOfFile: folder + "/pids", encoding: .utf8).split(separator: "\n")
            .map { $0.split(separator: " ") }.compactMap { words in Int32(words[0]).map { ($0, String(words[1])) } }
        #expect(Set(recorded.map(\.1)) == ["owner-watch", "mon.a", "osd.0", "client.rgw.a"])
        #expect(recorded.allSatisfy { Self.runs($0.0) })

        ProcessLaunch.kill(owner, exit: ownerExit)
        // The script's own pidfd wait: returns when the watcher has stopped the cluster and removed the folder.
        let watcher = try #require(recorded.first { $0.1 == "owner-watch" }?.0)
        let waited = try await TestCommand.run([CephRGWServer.script, "wait-owner", String(watcher)])
        #expect(waited.status == 0)
        #expect(!FileManager.default.fileExists(atPath: folder))
        for (pid, name) in recorded {
            #expect(!Self.runs(pid), "\(name) (pid \(pid)) still runs")
        }
    }

    /// Whether `pid` runs (a zombie waiting for its reaper does not).
    static func runs(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(after: close)...].split(separator: " ").first
        return state != "Z" && state != "X"
    }
}
