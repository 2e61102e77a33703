public import Flow
import Foundation

/// What a coordinator sends a worker to build the same `UploadFileOp`: the parameters as given
/// (S3's unresolved, so that each worker takes its own defaults), `skipExisting` as a Boolean for
/// `size` and off (as before the other rules), its word otherwise.
extension UploadFileOp: FlowRemoteOperation {
    public var remoteParameters: [String: FlowValue] {
        if s3Target != nil {
            var parameters = s3Parameters
            parameters["headers"] = .map(headers.mapValues(FlowValue.string))
            parameters["source"] = .string(source.rawValue)
            parameters["timeout"] = .double(timeout.seconds)
            parameters["skipExisting"] = skipRule.flowValue
            parameters["caFile"] = caFile.map(FlowValue.string)
            // `auto` goes as `auto`: each worker reads its own machine's AWS checksum settings.
            parameters["checksum"] = .string(checksumLeftToFlow ? "auto" : checksum.rawValue)
            parameters["listTarget"] = listTarget == .auto ? nil : .bool(listTarget == .always)
            parameters["listing"] = targetListing.map(FlowValue.string)
            parameters["hostFolder"] = hostFolder ? .bool(true) : nil
            return parameters
        }
        var parameters: [String: FlowValue] = [
            "url": .string(baseURL.absoluteString), "method": .string(method.rawValue), "headers": .map(headers.mapValues(FlowValue.string)),
            "source": .string(source.rawValue), "timeout": .double(timeout.seconds), "skipExisting": skipRule.flowValue,
        ]
        parameters["caFile"] = caFile.map(FlowValue.string)
        parameters["checksum"] = .string(checksum.rawValue)
        parameters["hostFolder"] = hostFolder ? .bool(true) : nil
        return parameters
    }
}
