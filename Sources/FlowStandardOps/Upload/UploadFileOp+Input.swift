import Flow
import Foundation

/// The file an element names, and errors that say where it was looked for.
extension UploadFileOp {
    /// The file this op's element names, under its host's folder with `hostFolder`.
    ///
    /// - Throws: ``FlowDataError`` for an element that is no file, or says no host with `hostFolder`.
    func fileInput(_ element: Any) throws -> FileInput {
        let input = try FileInput(bucketValue: element, key: primaryInputParamKey)
        guard hostFolder else { return input }
        let map = ((element as? FlowValue)?.anyValue ?? element) as? [String: Any]
        guard let host = map?["host"] as? String, !host.isEmpty, !host.contains("/"), host != ".", host != ".." else {
            throw FlowDataError.insufficientInputData("hostFolder: the element for \(input.name) names no host (a {path, host} map, as "
                + "ListFilesOp with each: worker gives): list the files with each: worker, or leave hostFolder out")
        }
        return input.inFolder(host)
    }

    /// A path the op could not find says where it looked: on a cluster, `ListFilesOp` lists the
    /// coordinator's folder, and a worker on another machine finds none of those paths, which
    /// `No such file or directory` alone does not explain.
    static func withWhereItWasRead(_ error: FlowStandardOpError, _ input: FileInput) -> FlowStandardOpError {
        guard case .path(let path, _) = input, error == RegularFile.failure(path, ENOENT) else { return error }
        return FlowStandardOpError(.unreadableFile, error.message + " (looked for on \(ProcessInfo.processInfo.hostName), the machine running "
                                   + "the op; for files only the coordinator's machine has, give the op source: coordinator)")
    }
}
