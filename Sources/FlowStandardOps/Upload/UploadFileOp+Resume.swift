#if canImport(Glibc)
import Glibc
#endif
import Flow

/// What `UploadFileOp` tells an S3 multipart upload about its element, so that the upload is
/// aborted only when the element is over for good and is otherwise left for the next try (or a
/// resumed run) to continue (``S3Upload``).
extension UploadFileOp {
    /// `upload` with the abort policy of this try.
    ///
    /// - A transient failure aborts only on the step's last try (``FlowOperation/attempt`` of
    ///   ``FlowOperation/retryPolicy``): with tries left, the next one continues the upload.
    /// - A cancellation aborts unless the process that started this one has gone (a local worker
    ///   whose coordinator was killed is stopped too), or the worker says it cancels because its
    ///   coordinator went silent (a standing worker, `FlowCancellationCause`): then `resume`
    ///   continues the upload. A run cancelled by its user (Ctrl-C, `cancel`) aborts it.
    func withAbortPolicy(_ upload: S3Upload) -> S3Upload {
        var upload = upload
        upload.isFinalTry = attempt >= retryPolicy.attempts
        let parent = getppid()
        let cause = FlowProgress.cancellation
        upload.abortsWhenCancelled = { getppid() == parent && cause?.isCoordinatorLost != true }
        upload.savedCheckpoint = savedCheckpoint
        upload.saveCheckpoint = { [weak self] in self?.saveCheckpoint($0) }
        return upload
    }
}

extension UploadManifestEntry {
    /// Notes a multipart upload's id, part size and parts (nothing for a single `PUT`).
    mutating func record(multipart outcome: S3Upload.Outcome) {
        guard let uploadID = outcome.uploadID, let partSize = outcome.partSize else { return }
        uploadId = uploadID
        self.partSize = partSize
        parts = outcome.completedParts.enumerated().map { Part(number: $0.offset + 1, etag: $0.element.etag, checksum: $0.element.checksum) }
    }
}
