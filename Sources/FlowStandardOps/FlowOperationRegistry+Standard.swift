public import Flow

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
        register("SimplePrintOp", summary: "logs `message` (string)", parameters: [.init("message", "the text to log", kind: .text)]) { parameters in
            SimplePrintOp(message: try parameters.string("message", default: ""))
        }
        register("MockAsyncLoginOp", summary: "reads email, password; sets accessToken after `delay` seconds (default 1)",
                 parameters: [Self.demoDelay]) { parameters in
            MockAsyncLoginOp(delay: try parameters.double("delay", default: 1))
        }
        register("MockAsyncLoadProfileOp", summary: "reads accessToken; sets profileRefreshDate after `delay` seconds (default 1)",
                 parameters: [Self.demoDelay]) { parameters in
            MockAsyncLoadProfileOp(delay: try parameters.double("delay", default: 1))
        }
        register("UploadSingleImageOp", summary: "group op: targetImageForUpload -> uploadedImageUrl (url_of_<image>) after `delay` seconds (default 1)",
                 parameters: [Self.demoDelay]) { parameters in
            UploadSingleImageOp(delay: try parameters.double("delay", default: 1))
        }
    }

    /// Registers the working ops: `UploadFileOp`, `VerifyObjectOp`, `ShellOp`, `HashFileOp`, `ListFilesOp`, `ListObjectsOp`,
    /// `SleepOp`.
    public mutating func registerWorkingOperations() {
        register(
            "UploadFileOp",
            summary: "group op: file (path or {name,path,bytes}) -> url; uploads to `url`/NAME by `method` PUT|POST (multipart field file), "
                + "`headers`, `source` worker|coordinator, `timeout` s (300), `skipExisting` size|modtime|checksum (HEAD first; a match is not sent)",
            primaryInputParamKey: "file", primaryOutputParamKey: "url", prepareInput: UploadFileSource.prepareInput,
            prepareGroup: UploadFileOp.prepareGroup, parameters: Self.uploadFileParameters
        ) { parameters in
            try UploadFileOp(parameters: parameters)
        }
        register(
            "ShellOp",
            summary: "input (appended as last argument) -> output (stdout); runs `command` (argv list, or a string with `shell: true`), "
                + "`env`, `timeout` s (60), `workingDirectory`",
            primaryInputParamKey: "input", primaryOutputParamKey: "output", resolveParameters: ShellCommandTemplate.resolve,
            parameters: Self.shellParameters
        ) { parameters in
            try ShellOp(parameters: parameters)
        }
        register("HashFileOp", summary: "group op: file (path) -> sha256 (lowercase hex), streamed", primaryInputParamKey: "file",
                 primaryOutputParamKey: "sha256", parameters: []) { _ in
            HashFileOp()
        }
        register(
            "ListFilesOp",
            summary: "serial op: sets `output` (default files) to the sorted absolute paths of the regular files in `path`, "
                + "optionally matching `glob`",
            primaryInputParamKey: "", primaryOutputParamKey: "", placement: .coordinator, parameters: Self.listFilesParameters
        ) { parameters in
            try ListFilesOp(parameters: parameters)
        }
        register(
            "ListObjectsOp",
            summary: "serial op: sets `output` (default objects) to {key, size, etag, lastModified} of each object under `url` "
                + "(s3://BUCKET/PREFIX), sorted by key; ListObjectsV2 pages, folders listed `concurrency` (16) at once",
            primaryInputParamKey: "", primaryOutputParamKey: "", placement: .coordinator, parameters: Self.listObjectsParameters
        ) { parameters in
            try ListObjectsOp(parameters: parameters)
        }
        register(
            "VerifyObjectOp",
            summary: "group op: object (a manifest entry) -> check {target, status ok|missing|changed, detail}; HEAD (S3: size and "
                + "stored checksum, else ETag; HTTP: size and ETag), or with `deep` a GET hashed with the entry's algorithm",
            primaryInputParamKey: "object", primaryOutputParamKey: "check", parameters: Self.verifyObjectParameters
        ) { parameters in
            try VerifyObjectOp(parameters: parameters)
        }
        register("SleepOp", summary: "item -> item (passed through) after `ms` milliseconds (0)", primaryInputParamKey: "item",
                 primaryOutputParamKey: "item", parameters: [.init("ms", "milliseconds to wait (0)", kind: .number)]) { parameters in
            try SleepOp(parameters: parameters)
        }
    }

    /// The demo ops' `delay`.
    static let demoDelay = FlowParameterDeclaration("delay", "seconds before it finishes (1)", kind: .number)

    /// `UploadFileOp`'s parameters, for HTTP(S) and `s3://` targets.
    static let uploadFileParameters: [FlowParameterDeclaration] = [
        .init("url", "where files go: http(s)://HOST/PATH (the file's name appended) or s3://BUCKET/PREFIX", kind: .text),
        .init("method", "PUT (default) or POST (multipart, field file); S3 takes PUT only", kind: .text),
        .init("headers", "extra request headers, name: value", kind: .map),
        .init("source", "who reads the file: worker (default) or coordinator", kind: .text),
        .init("timeout", "seconds the whole upload may take (300)", kind: .seconds),
        .init("skipExisting", "HEAD first and leave alone a file the store has: size (or true), modtime (size and "
              + "x-amz-meta-mtime, stored on upload), checksum (size and the stored checksum; reads the file); false (default) sends all",
              kind: .text),
        .init("caFile", "a PEM file of certificate authorities trusted besides the machine's own", kind: .text),
        .init("listTarget", "s3 with skipExisting: list each target folder once per worker instead of a HEAD per file: auto (groups over "
              + "1,000 files), true, false", kind: .text),
        .init("listing", "s3: the name of the target listing a group's tasks share (the coordinator sets it)", kind: .text),
        .init("hostFolder", "put each file under a folder named after its element's host (HOST/NAME), as each: worker lists them; false (default)",
              kind: .bool),
        .init("checksum", "computed while the file is read: crc64nvme (S3 default), crc32c, sha256, md5, none (HTTP default); S3 checks it, HTTP records it", kind: .text),
        .init("endpoint", "s3: the store's http(s) URL (default $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL or AWS)", kind: .text),
        .init("region", "s3: the signing region (default $AWS_REGION, $AWS_DEFAULT_REGION or us-east-1)", kind: .text),
        .init("pathStyle", "s3: the bucket in the path, not the host name (default true with an endpoint)", kind: .bool),
        .init("partSize", "s3: the multipart part size, 5MiB to 5GiB (16MiB)", kind: .size),
        .init("partConcurrency", "s3: parts sent at once per file, 1 to 64 (4)", kind: .integer),
    ]

    /// `VerifyObjectOp`'s parameters.
    static let verifyObjectParameters: [FlowParameterDeclaration] = [
        .init("deep", "read each object back and hash it with the entry's algorithm (false: a HEAD)", kind: .bool),
        .init("endpoint", "s3: the store's http(s) URL, over the one the entry recorded and the environment's", kind: .text),
        .init("region", "s3: the signing region, over the one the entry recorded and the environment's", kind: .text),
        .init("pathStyle", "s3: the bucket in the path, not the host name (default true with an endpoint)", kind: .bool),
        .init("headers", "extra request headers for http(s) targets, name: value", kind: .map),
        .init("timeout", "seconds one check may take (300)", kind: .seconds),
        .init("caFile", "a PEM file of certificate authorities trusted besides the machine's own", kind: .text),
    ]

    /// `ListObjectsOp`'s parameters.
    static let listObjectsParameters: [FlowParameterDeclaration] = [
        .init("url", "what to list: s3://BUCKET or s3://BUCKET/PREFIX", kind: .text),
        .init("output", "the bucket key the list goes under (objects)", kind: .text),
        .init("recursive", "every key below the prefix (true); false: one folder's", kind: .bool),
        .init("concurrency", "listing requests in flight, 1 to 256 (16); 1 is one paginator", kind: .integer),
        .init("pageSize", "keys asked for in one request, 1 to 1000 (1000)", kind: .integer),
        .init("include", "globs a key's path below the prefix must match; ** crosses folders", kind: .list),
        .init("exclude", "globs of paths below the prefix left out; exclude wins over include", kind: .list),
        .init("minSize", "leaves out smaller objects (bytes, or with KiB, MiB, GiB)", kind: .size),
        .init("maxSize", "leaves out bigger objects (bytes, or with KiB, MiB, GiB)", kind: .size),
        .init("newerThan", "keeps objects written within this duration (24h) or since this date", kind: .text),
        .init("timeout", "seconds one page's request may take (60)", kind: .seconds),
        .init("caFile", "a PEM file of certificate authorities trusted besides the machine's own", kind: .text),
        .init("endpoint", "the store's http(s) URL (default $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL or AWS)", kind: .text),
        .init("region", "the signing region (default $AWS_REGION, $AWS_DEFAULT_REGION or us-east-1)", kind: .text),
        .init("pathStyle", "the bucket in the path, not the host name (default true with an endpoint)", kind: .bool),
    ]

    /// `ShellOp`'s parameters.
    static let shellParameters: [FlowParameterDeclaration] = [
        .init("command", "the program and its arguments (a list), or a script with shell: true", kind: .list),
        .init("shell", "run command, a string, with /bin/sh -c (false)", kind: .bool),
        .init("env", "environment variables added, name: value", kind: .map),
        .init("timeout", "seconds the program may run (60)", kind: .seconds),
        .init("workingDirectory", "the folder it runs in", kind: .text),
    ]

    /// `ListFilesOp`'s parameters.
    static let listFilesParameters: [FlowParameterDeclaration] = [
        .init("path", "the folder to list", kind: .text),
        .init("glob", "keeps only names matching this fnmatch(3) pattern", kind: .text),
        .init("output", "the bucket key the list goes under (files)", kind: .text),
        .init("recursive", "lists subfolders too (false)", kind: .bool),
        .init("include", "globs a path relative to path must match; ** crosses folders", kind: .list),
        .init("exclude", "globs of relative paths left out; exclude wins over include", kind: .list),
        .init("minSize", "leaves out smaller files (bytes, or with KiB, MiB, GiB)", kind: .size),
        .init("maxSize", "leaves out bigger files (bytes, or with KiB, MiB, GiB)", kind: .size),
        .init("newerThan", "keeps files changed within this duration (24h) or since this date", kind: .text),
        .init("followLinks", "follows symbolic links to folders and files (false)", kind: .bool),
        .init("pageSize", "files handed to a group that reads the list at a time, 1 to 1000 (1000)", kind: .integer),
    ]
}
