import Flow

extension FlowOperationRegistry {
    /// The ops every stock `flow-worker` offers: the seed's demo ops, and the working ops
    /// (uploads, programs, files, timing).
    public static var standard: FlowOperationRegistry {
        var registry = FlowOperationRegistry()
        registry.registerDemoOperations()
        registry.registerWorkingOperations()
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

    /// Registers the working ops: `UploadFileOp`, `ShellOp`, `HashFileOp`, `ListFilesOp`, `SleepOp`.
    public mutating func registerWorkingOperations() {
        register(
            "UploadFileOp",
            summary: "group op: file (path or {name,path,bytes}) -> url; uploads to `url`/NAME by `method` PUT|POST (multipart field file), "
                + "`headers`, `source` worker|coordinator, `timeout` s (300), `skipExisting` (HEAD first; same size: not sent)",
            primaryInputParamKey: "file", primaryOutputParamKey: "url", prepareInput: UploadFileSource.prepareInput
        ) { parameters in
            try UploadFileOp(parameters: parameters)
        }
        register(
            "ShellOp",
            summary: "input (appended as last argument) -> output (stdout); runs `command` (argv list, or a string with `shell: true`), "
                + "`env`, `timeout` s (60), `workingDirectory`",
            primaryInputParamKey: "input", primaryOutputParamKey: "output", resolveParameters: ShellCommandTemplate.resolve
        ) { parameters in
            try ShellOp(parameters: parameters)
        }
        register("HashFileOp", summary: "group op: file (path) -> sha256 (lowercase hex), streamed", primaryInputParamKey: "file",
                 primaryOutputParamKey: "sha256") { _ in
            HashFileOp()
        }
        register(
            "ListFilesOp",
            summary: "serial op: sets `output` (default files) to the sorted absolute paths of the regular files in `path`, "
                + "optionally matching `glob`",
            primaryInputParamKey: "", primaryOutputParamKey: "", placement: .coordinator
        ) { parameters in
            try ListFilesOp(parameters: parameters)
        }
        register("SleepOp", summary: "item -> item (passed through) after `ms` milliseconds (0)", primaryInputParamKey: "item",
                 primaryOutputParamKey: "item") { parameters in
            try SleepOp(parameters: parameters)
        }
    }
}
