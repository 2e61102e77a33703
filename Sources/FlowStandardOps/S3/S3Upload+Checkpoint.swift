import Flow
import Foundation
import NIOCore

/// A multipart upload's place in the run's journal: after its start and as its parts are stored,
/// ``S3Upload`` saves the upload id, part size and finished parts (numbers, ETags, checksums) as
/// its op's checkpoint (``FlowOperation/saveCheckpoint(_:)``). The coordinator keeps it with the
/// task and in the journal, so a try after a lost worker, a failure, or `resume` after the
/// coordinator stopped, continues that upload: `ListParts` reconciles what the store has, and
/// only the missing parts are sent. Without a checkpoint (a run that predates them, or a worker
/// or coordinator that does not keep them) the store's list of unfinished uploads is searched
/// instead (`S3Upload+Resume.swift`).
extension S3Upload {
    /// What a multipart upload saves of itself.
    struct SavedUpload: Sendable, Equatable {
        var key: String
        var uploadID: String
        var partSize: Int
        /// The file's size and last modification when the upload started: a file changed since is
        /// a new upload.
        var size: Int64
        var modified: Double
        /// The parts stored, by number.
        var parts: [Int: SentPart] = [:]

        /// The checkpoint's value.
        var value: FlowValue {
            let parts = self.parts.keys.sorted().map { number -> FlowValue in
                let part = self.parts[number]!
                var entry: [String: FlowValue] = ["number": .integer(Int64(number)), "etag": .string(part.etag)]
                if let checksum = part.checksum { entry["checksum"] = .string(checksum) }
                return .map(entry)
            }
            return .map(["multipartUpload": .map([
                "key": .string(key), "uploadId": .string(uploadID), "partSize": .integer(Int64(partSize)),
                "size": .integer(size), "modified": .double(modified), "parts": .array(parts),
            ])])
        }

        /// The upload a checkpoint holds, `nil` when it holds none (or another op's).
        init?(_ checkpoint: FlowValue?) {
            guard case .map(let outer)? = checkpoint, case .map(let fields)? = outer["multipartUpload"],
                  case .string(let key)? = fields["key"], case .string(let uploadID)? = fields["uploadId"],
                  case .integer(let partSize)? = fields["partSize"], partSize > 0, case .integer(let size)? = fields["size"],
                  case .double(let modified)? = fields["modified"], case .array(let list)? = fields["parts"] else { return nil }
            self.init(key: key, uploadID: uploadID, partSize: Int(partSize), size: size, modified: modified)
            for case .map(let entry) in list {
                guard case .integer(let number)? = entry["number"], number > 0, case .string(let etag)? = entry["etag"] else { continue }
                var checksum: String?
                if case .string(let text)? = entry["checksum"] { checksum = text }
                parts[Int(number)] = SentPart(etag: etag, checksum: checksum)
            }
        }

        init(key: String, uploadID: String, partSize: Int, size: Int64, modified: Double) {
            (self.key, self.uploadID, self.partSize, self.size, self.modified) = (key, uploadID, partSize, size, modified)
        }
    }

    /// The unfinished upload to continue: the one the op's checkpoint names, else one found in the
    /// store's list of unfinished uploads; `nil` to start a new one.
    func uploadToContinue(_ source: PartSource, partSize: Int, deadline: NIODeadline) async throws -> Unfinished? {
        let (size, modified) = (source.size, source.modified)
        if let saved = try await savedUpload(source, partSize: partSize, deadline: deadline) { return saved }
        // Found on the store, not named by this run: adopted only part by part, as proven.
        guard let found = try await unfinishedUpload(size: size, partSize: partSize, modified: modified, deadline: deadline) else {
            return nil
        }
        return try await proving(found, source: source, partSize: partSize)
    }

    /// Saves the upload as it starts (or continues), with the parts an earlier try stored, and
    /// returns the record that its parts are added to; `nil` when the file's time is unknown
    /// (then nothing is continued, nor saved).
    func startRecord(uploadID: String, partSize: Int, size: Int64, modified: Date?, stored: [Int: StoredPart]) -> SavedUpload? {
        guard let modified else { return nil }
        var saved = SavedUpload(key: key, uploadID: uploadID, partSize: partSize, size: size, modified: modified.timeIntervalSince1970)
        for (number, part) in stored { saved.parts[number] = SentPart(etag: part.etag, checksum: part.checksum) }
        saveCheckpoint(saved.value)
        return saved
    }

    /// The upload the op's checkpoint says to continue, when it is one of this key and file in
    /// parts of `partSize`: `.some(nil)` when it cannot be continued and a new one starts, `nil`
    /// when there is no such checkpoint (then the store's list of unfinished uploads is searched).
    func savedUpload(_ source: PartSource, partSize: Int, deadline: NIODeadline) async throws -> Unfinished?? {
        let (size, modified) = (source.size, source.modified)
        guard let saved = SavedUpload(savedCheckpoint), saved.key == key else { return nil }
        guard saved.partSize == partSize, saved.size == size, let modified, saved.modified == modified.timeIntervalSince1970 else {
            log("not continuing multipart upload \(saved.uploadID) of \(objectURI) from the run's journal: the file or the part size "
                + "changed since it started; starting a new upload")
            return .some(nil)
        }
        let partCount = Int((size + Int64(partSize) - 1) / Int64(partSize))
        let listed: [StoredPart]
        do {
            listed = try await listParts(uploadID: saved.uploadID, deadline: deadline)
        } catch let error as FlowStandardOpError where error.serviceCode == "NoSuchUpload" {
            // Completed by an earlier try whose answer was lost (its coordinator killed meanwhile)?
            if let done = try await completedObject(source, partSize: partSize, uploadID: saved.uploadID, deadline: deadline) {
                return .some(Unfinished(uploadID: saved.uploadID, parts: [:], completed: done))
            }
            log("multipart upload \(saved.uploadID) of \(objectURI) cannot be continued: the store no longer has it (NoSuchUpload: "
                + "expired, or aborted by a lifecycle rule or another client); starting the upload again")
            return .some(nil)
        } catch let error as FlowStandardOpError {
            // The parts the journal has are taken as they are: a part the store does not hold so
            // fails the completion (InvalidPart), which starts the upload again.
            log("could not list the parts of multipart upload \(saved.uploadID) of \(objectURI) (\(error.message)); continuing with "
                + "the \(saved.parts.count) parts the run's journal has")
            return .some(Unfinished(uploadID: saved.uploadID, parts: saved.storedParts(size: size)))
        }
        guard Self.fits(listed, size: size, partSize: partSize, partCount: partCount) else {
            log("not continuing multipart upload \(saved.uploadID) of \(objectURI): the store's parts do not fit this file; "
                + "starting a new upload")
            return .some(nil)
        }
        var kept: [Int: StoredPart] = [:]
        for var part in listed where part.size == Self.length(ofPart: part.number, size: size, partSize: partSize) {
            // The store's checksum, else the journal's for the same ETag (read from disk otherwise).
            if part.checksum == nil, let journaled = saved.parts[part.number], journaled.etag == part.etag { part.checksum = journaled.checksum }
            kept[part.number] = part
        }
        log("continuing multipart upload \(saved.uploadID) of \(objectURI) from its checkpoint: \(kept.count) of \(partCount) "
            + "parts on the store (\(saved.parts.count) recorded)")
        return .some(Unfinished(uploadID: saved.uploadID, parts: kept))
    }
}

extension S3Upload.SavedUpload {
    /// The journaled parts as stored ones, each of the size its number needs.
    func storedParts(size: Int64) -> [Int: S3Upload.StoredPart] {
        parts.reduce(into: [:]) { stored, entry in
            stored[entry.key] = S3Upload.StoredPart(number: entry.key, etag: entry.value.etag,
                                                    size: S3Upload.length(ofPart: entry.key, size: size, partSize: partSize),
                                                    checksum: entry.value.checksum, stored: nil)
        }
    }
}

/// When a multipart upload saves its checkpoint again: after every part while it has few, and at
/// most once a second beyond that (each save carries every finished part).
struct CheckpointPacer {
    private var last: ContinuousClock.Instant?

    mutating func isDue(partsDone: Int) -> Bool {
        let now = ContinuousClock.now
        guard partsDone <= 64 || last.map({ now - $0 >= .seconds(1) }) ?? true else { return false }
        last = now
        return true
    }
}
