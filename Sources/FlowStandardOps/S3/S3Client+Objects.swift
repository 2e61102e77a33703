import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Reading objects back: the `HEAD` of `skipExisting` and `verify`, and the streamed `GET` of
/// `verify --deep`.
extension S3Client {
    /// The object's head: its status and headers (404 for a missing object). With `checksumMode`
    /// it asks for the stored checksum (`x-amz-checksum-mode: ENABLED`), which S3 then returns as
    /// `x-amz-checksum-ALG`.
    ///
    /// - Throws: a transport failure or time limit as ``FlowStandardOpError``; cancellation.
    func head(key: String, checksumMode: Bool, deadline: NIODeadline, action: String) async throws -> ObjectHead {
        let headers = checksumMode ? [("x-amz-checksum-mode", "ENABLED")] : []
        let answer = try await send(.HEAD, key: key, headers: headers, body: .empty, deadline: deadline, action: action)
        return ObjectHead(status: Int(answer.status.code), headers: answer.headers)
    }

    /// Reads the object with a signed `GET`, handing each part of its body to `consume` as it
    /// arrives (nothing is kept), and returns its head. A status other than 2xx returns its head
    /// without calling `consume`.
    ///
    /// - Throws: a transport failure or time limit as ``FlowStandardOpError``; cancellation.
    func get(key: String, deadline: NIODeadline, action: String, consume: (ByteBuffer) throws -> Void) async throws -> ObjectHead {
        let location = target.location(key: key)
        let signature = signer.sign(method: "GET", host: location.host, path: location.path, query: [], headers: [],
                                    payloadHash: SigV4Signer.emptyPayloadHash, date: Date())
        var request = HTTPClientRequest(url: location.url.absoluteString)
        request.method = .GET
        request.headers.add(name: "Host", value: location.host)
        for (name, value) in signature { request.headers.add(name: name, value: value) }
        HTTPUploadClient.stamp(&request.headers)
        request.tlsConfiguration = tls
        do {
            let response = try await HTTPUploadClient.shared.execute(request, deadline: deadline)
            let head = ObjectHead(status: Int(response.status.code), headers: response.headers)
            for try await part in response.body where head.exists {
                try consume(part)
            }
            return head
        } catch {
            throw UploadRequest.failure(error, action: action, timeout: timeout)
        }
    }
}
