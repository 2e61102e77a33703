import Flow
import Foundation
import NIOCore

/// Proving that parts found on the store are this file's bytes before an upload adopts them.
///
/// An unfinished upload found by listing the store (not named by this run's own checkpoint) may
/// have been left by another run of another file with the same key and size, or planted by anyone
/// who can write to the bucket; its parts' sizes and times prove nothing (a file restored with
/// `cp -p`, `rsync -t` or tar keeps an older time). Completing with them once made an object of
/// two files, and the manifest's checksum was the mixed object's. So each listed part is read from
/// the same range of the local file and hashed: it is kept only when its checksum of the upload's
/// algorithm (where the store lists one) or its ETag (a plain MD5, as S3, MinIO, Ceph and moto
/// give a part stored without SSE-KMS) matches. A part that cannot be proven is sent again.
extension S3Upload {
    /// The parts of `unfinished` that hold exactly this file's bytes, each with its checksum of the
    /// upload's algorithm filled in from the file; `nil` when none does (a new upload starts, and
    /// the one found is left alone: it may not be this run's to abort).
    func proving(_ unfinished: Unfinished, source: PartSource, partSize: Int) async throws -> Unfinished? {
        var proven: [Int: StoredPart] = [:]
        var refused: [Int] = []
        for number in unfinished.parts.keys.sorted() {
            try Task.checkCancellation()
            guard var part = unfinished.parts[number] else { continue }
            let offset = Int64(number - 1) * Int64(partSize)
            let length = Int(Self.length(ofPart: number, size: source.size, partSize: partSize))
            let (bytes, _, value) = try await source.read(at: offset, count: length, checksum: checksum)
            if let listed = part.checksum, checksum.s3Name != nil {
                guard listed == value else { refused.append(number); continue }
            } else {
                guard let etag = Self.plainMD5(etag: part.etag),
                      etag == UploadChecksum.md5.base64(of: bytes.readableBytesView).flatMap(Self.hex) else {
                    refused.append(number)
                    continue
                }
                if checksum.s3Name != nil { part.checksum = value }
            }
            proven[number] = part
        }
        if !refused.isEmpty {
            log("multipart upload \(unfinished.uploadID) of \(objectURI): \(Self.partList(refused)) on the store "
                + "\(refused.count == 1 ? "is" : "are") not this file's bytes (\(refused.count == 1 ? "its" : "their") checksum or "
                + "ETag differs from the same range of the file, or cannot be checked); "
                + (proven.isEmpty ? "starting a new upload" : "sending \(refused.count == 1 ? "it" : "them") again"))
        }
        return proven.isEmpty ? nil : Unfinished(uploadID: unfinished.uploadID, parts: proven)
    }

    /// An ETag's MD5 in lowercase hex, `nil` when it is not a plain MD5 (a multipart object's
    /// `…-N`, an SSE-KMS part's, an empty one).
    static func plainMD5(etag: String) -> String? {
        let text = etag.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")).lowercased()
        guard text.utf8.count == 32, text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        return text
    }

    /// Base64 as lowercase hex.
    static func hex(_ base64: String) -> String? {
        Data(base64Encoded: base64).map { $0.map { String(format: "%02x", $0) }.joined() }
    }

    /// `part 3`, `parts 1, 2 and 4`, `parts 1–40 and 7 more`.
    static func partList(_ numbers: [Int]) -> String {
        guard numbers.count > 1 else { return "part \(numbers.first ?? 0)" }
        let shown = numbers.prefix(10).map(String.init)
        if numbers.count > 10 { return "parts " + shown.joined(separator: ", ") + " and \(numbers.count - 10) more" }
        return "parts " + shown.dropLast().joined(separator: ", ") + " and " + shown.last!
    }
}
