import Flow

extension FlowOperationRegistry {
    /// The ops every stock `flow-worker` offers: the seed's demo ops.
    public static var standard: FlowOperationRegistry {
        var registry = FlowOperationRegistry()
        registry.registerDemoOperations()
        return registry
    }

    /// Registers the seed's four demo ops under their names.
    public mutating func registerDemoOperations() {
        register("SimplePrintOp", summary: "logs `message` (string)") { parameters in
            SimplePrintOp(message: try parameters.string("message", default: ""))
        }
        register("MockAsyncLoginOp", summary: "reads email, password; sets accessToken after `delay` seconds (default 1)") { parameters in
            MockAsyncLoginOp(delay: try parameters.double("delay", default: 1))
        }
        register("MockAsyncLoadProfileOp", summary: "reads accessToken; sets profileRefreshDate after `delay` seconds (default 1)") { parameters in
            MockAsyncLoadProfileOp(delay: try parameters.double("delay", default: 1))
        }
        register("UploadSingleImageOp", summary: "group op: targetImageForUpload -> uploadedImageUrl (url_of_<image>) after `delay` seconds (default 1)") { parameters in
            UploadSingleImageOp(delay: try parameters.double("delay", default: 1))
        }
    }
}
