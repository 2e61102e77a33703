import Flow

/// How `UploadFileOp` reads its `checksum` and `skipExisting` parameters.
extension UploadFileOp {
    /// Reads S3's `checksum`: `auto` (or none given) as ``checksumIsAuto`` says, else the one named;
    /// and the machine's AWS checksum switches (``S3ChecksumSettings``).
    func setS3Checksum(_ parameters: FlowParameters) throws {
        let settings: S3ChecksumSettings
        do throws(S3CredentialError) {
            settings = try S3ChecksumSettings.read()
        } catch {
            throw parameters.error("checksum", "cannot read this machine's AWS checksum settings: \(error.description)")
        }
        validatesStoredChecksums = settings.validatesWhenSupported
        if parameters["checksum"] == nil || parameters["checksum"]?.stringValue?.lowercased() == "auto" {
            checksumLeftToFlow = true
            checksumIsAuto = settings.calculatesWhenSupported
            checksum = settings.calculatesWhenSupported ? .s3Default : .none
        } else {
            checksum = try parameters.choice("checksum", default: UploadChecksum.s3Default)
        }
    }

    /// Reads `skipExisting`; `checksum` needs an algorithm to compare.
    func setSkipRule(_ parameters: FlowParameters) throws {
        skipRule = try UploadSkipRule(parameters: parameters)
        if skipRule == .checksum && checksum == .none {
            throw parameters.error("skipExisting", "checksum compares the op's checksum, and it is none: give checksum: crc32c, "
                                   + "crc64nvme, sha256 or md5 (the one the store keeps)")
        }
    }
}
