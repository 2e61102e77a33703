import Foundation
import NIOCore
import NIOHTTP1

/// Continuing a multipart upload that an earlier try left unfinished (a worker killed, a
/// coordinator killed and resumed, a transient failure retried): the store is the record of what
/// arrived, since a task has no channel to report parts while it runs.
///
/// At a multipart upload's start, ``S3Upload`` lists the unfinished uploads of its exact key
/// (`ListMultipartUploads?uploads&prefix=KEY`), most recently initiated first, and lists the parts
/// of each (`ListParts`, page by page) until one fits this file: same part size (its first part
/// not the last is `partSize` long), no part beyond the file's last, and the same checksum
/// algorithm when the store names it. Each part kept is then proven to be this file's bytes
/// (`S3Upload+PartProof.swift`), and only the missing or unproven parts are sent. A listed part is sent
/// again when its size is not the one its number needs, or when it was not stored in a later second
/// than the file's last modification (S3 lists times to the second; its bytes may be the old
/// file's). The store's clock and the machine's are taken to agree.
extension S3Upload {
    /// A part the store lists for an unfinished upload.
    struct StoredPart: Sendable, Equatable {
        var number: Int
        var etag: String
        var size: Int64
        /// Its checksum of the upload's algorithm in base64, when the store lists it.
        var checksum: String?
        /// When it was stored, when the store says it.
        var stored: Date?
    }

    /// An unfinished upload this file can continue, with the parts it keeps.
    struct Unfinished: Sendable {
        var uploadID: String
        /// The parts kept, by number: their size is right and they are newer than the file.
        var parts: [Int: StoredPart]
        /// The object, when an earlier try already completed this upload with this file's bytes:
        /// nothing is left to send (`S3Upload+Completed.swift`).
        var completed: Outcome? = nil
    }

    /// How many uploads and parts a listing asks for at once: small enough that each answer fits
    /// in what ``S3Client`` keeps of it (64 KiB).
    static let uploadsPerPage = 50
    static let partsPerPage = 200

    /// The unfinished upload of this key that the file can continue, or `nil` to start a new one.
    ///
    /// - Parameters:
    ///   - size: the file's size.
    ///   - partSize: this upload's part size.
    ///   - modified: the file's last modification, `nil` when unknown (then nothing is continued).
    /// - Throws: cancellation; a failed listing is logged and gives `nil`.
    func unfinishedUpload(size: Int64, partSize: Int, modified: Date?, deadline: NIODeadline) async throws -> Unfinished? {
        guard let modified else { return nil }
        let candidates: [ListedUpload]
        do {
            candidates = try await listUploads(deadline: deadline)
        } catch let error as FlowStandardOpError {
            log("could not look for an unfinished multipart upload of \(objectURI) to continue (\(error.message)); starting a new one")
            return nil
        }
        let partCount = Int((size + Int64(partSize) - 1) / Int64(partSize))
        for candidate in candidates {
            try Task.checkCancellation()
            if let algorithm = candidate.checksumAlgorithm, !algorithm.isEmpty, algorithm.uppercased() != (checksum.s3Name ?? algorithm.uppercased()) {
                continue
            }
            let parts: [StoredPart]
            do {
                parts = try await listParts(uploadID: candidate.uploadID, deadline: deadline)
            } catch let error as FlowStandardOpError {
                let why = error.serviceCode == "NoSuchUpload" ? "it is gone (NoSuchUpload)" : error.message
                log("cannot continue multipart upload \(candidate.uploadID) of \(objectURI): \(why)")
                continue
            }
            guard Self.fits(parts, size: size, partSize: partSize, partCount: partCount) else { continue }
            var kept: [Int: StoredPart] = [:]
            for part in parts where part.size == Self.length(ofPart: part.number, size: size, partSize: partSize)
                && (part.stored.map { $0 > modified } ?? false) {
                kept[part.number] = part
            }
            return Unfinished(uploadID: candidate.uploadID, parts: kept)
        }
        return nil
    }

    /// Whether listed parts can belong to an upload of this file in parts of `partSize`: none past
    /// the last, and the first one that is not the last is `partSize` long. No parts fits.
    static func fits(_ parts: [StoredPart], size: Int64, partSize: Int, partCount: Int) -> Bool {
        guard parts.allSatisfy({ (1...partCount).contains($0.number) }) else { return false }
        if let first = parts.first(where: { $0.number < partCount }) { return first.size == Int64(partSize) }
        if let last = parts.first { return last.size == length(ofPart: last.number, size: size, partSize: partSize) }
        return true
    }

    /// The length of part `number` (from 1) of a file of `size` bytes in parts of `partSize`.
    static func length(ofPart number: Int, size: Int64, partSize: Int) -> Int64 {
        let offset = Int64(number - 1) * Int64(partSize)
        return max(0, min(Int64(partSize), size - offset))
    }

    /// An unfinished upload as `ListMultipartUploads` lists it.
    struct ListedUpload: Sendable, Equatable {
        var uploadID: String
        var initiated: Date?
        var checksumAlgorithm: String?
    }

    /// The unfinished uploads of exactly this key, most recently initiated first (the store's
    /// later ones first among equal times).
    func listUploads(deadline: NIODeadline) async throws -> [ListedUpload] {
        do {
            return try await listUploads(prefix: key, deadline: deadline)
        } catch let error as FlowStandardOpError where error.serviceCode == "SignatureDoesNotMatch" && key.contains("/") {
            // moto (5.x) checks the signature of a query value with `/` against the decoded value,
            // refusing a correct one (`%2F`, as S3 and botocore sign it): ask with what comes
            // before the first `/`, which such a store signs alike, and keep the exact key.
            return try await listUploads(prefix: String(key.prefix { $0 != "/" }), deadline: deadline)
        }
    }

    private func listUploads(prefix: String, deadline: NIODeadline) async throws -> [ListedUpload] {
        var found: [ListedUpload] = []
        var markers: (key: String, uploadID: String)?
        repeat {
            var query = [("uploads", ""), ("prefix", prefix), ("max-uploads", String(Self.uploadsPerPage))]
            if let markers { query += [("key-marker", markers.key), ("upload-id-marker", markers.uploadID)] }
            let answer = try await client.expectSuccess(.GET, key: nil, query: query, body: .empty, deadline: deadline,
                                                        action: "listing the unfinished multipart uploads of \(objectURI)")
            let text = String(decoding: answer.excerpt, as: UTF8.self)
            guard answer.excerpt.count < S3Client.answerLimit else {
                throw FlowStandardOpError(.s3, "the store's list of unfinished multipart uploads was longer than expected")
            }
            for upload in Self.elements("Upload", in: text) where S3ErrorResponse.value(of: "Key", in: upload) == key {
                guard let id = S3ErrorResponse.value(of: "UploadId", in: upload), !id.isEmpty else { continue }
                found.append(ListedUpload(uploadID: id, initiated: S3ErrorResponse.value(of: "Initiated", in: upload).flatMap(Self.date),
                                          checksumAlgorithm: S3ErrorResponse.value(of: "ChecksumAlgorithm", in: upload)))
            }
            markers = nil
            if S3ErrorResponse.value(of: "IsTruncated", in: text) == "true",
               let nextKey = S3ErrorResponse.value(of: "NextKeyMarker", in: text),
               let nextID = S3ErrorResponse.value(of: "NextUploadIdMarker", in: text), !nextKey.isEmpty || !nextID.isEmpty {
                markers = (nextKey, nextID)
            }
        } while markers != nil
        let distant = Date.distantPast
        return found.enumerated().sorted { left, right in
            let (a, b) = (left.element.initiated ?? distant, right.element.initiated ?? distant)
            return a == b ? left.offset > right.offset : a > b
        }.map(\.element)
    }

    /// Every part the store lists for `uploadID`, page by page, in order of number.
    func listParts(uploadID: String, deadline: NIODeadline) async throws -> [StoredPart] {
        var parts: [Int: StoredPart] = [:]
        var marker: String?
        let element = checksum.s3Name.map { "Checksum" + $0 }
        repeat {
            var query = [("uploadId", uploadID), ("max-parts", String(Self.partsPerPage))]
            if let marker { query.append(("part-number-marker", marker)) }
            let answer = try await client.expectSuccess(.GET, key: key, query: query, body: .empty, deadline: deadline,
                                                        action: "listing the parts of multipart upload \(uploadID)")
            let text = String(decoding: answer.excerpt, as: UTF8.self)
            guard answer.excerpt.count < S3Client.answerLimit else {
                throw FlowStandardOpError(.s3, "the store's list of parts was longer than expected")
            }
            for part in Self.elements("Part", in: text) {
                guard let number = S3ErrorResponse.value(of: "PartNumber", in: part).flatMap({ Int($0) }),
                      let etag = S3ErrorResponse.value(of: "ETag", in: part), !etag.isEmpty,
                      let size = S3ErrorResponse.value(of: "Size", in: part).flatMap({ Int64($0) }) else { continue }
                parts[number] = StoredPart(number: number, etag: etag, size: size,
                                           checksum: element.flatMap { S3ErrorResponse.value(of: $0, in: part) },
                                           stored: S3ErrorResponse.value(of: "LastModified", in: part).flatMap(Self.date))
            }
            let next = S3ErrorResponse.value(of: "NextPartNumberMarker", in: text)
            marker = S3ErrorResponse.value(of: "IsTruncated", in: text) == "true" && next != marker ? next : nil
        } while marker != nil
        return parts.values.sorted { $0.number < $1.number }
    }

    /// The bodies of every `<name>…</name>` element in `text`, in order (S3's listings are flat).
    static func elements(_ name: String, in text: String) -> [String] {
        S3ErrorResponse.contents(of: name, in: text, all: true)
    }

    /// An ISO 8601 time as S3 writes it (`2026-11-27T21:56:12.000Z`, with or without the fraction).
    static func date(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        return try? Date(text, strategy: .iso8601)
    }
}
