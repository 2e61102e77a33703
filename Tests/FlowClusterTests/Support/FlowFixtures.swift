/// The flow files the tests run, written to a temporary directory at test time.
enum FlowFixtures {
    /// The seed's chain: two print ops one after the other.
    static let chain = """
        flow: chain
        steps:
          - op: SimplePrintOp
            with: {message: Step1}
          - op: SimplePrintOp
            with: {message: Step2}
        """

    /// The seed's login then load-profile scenario, with short delays.
    static let loginThenProfile = """
        flow: login-then-profile
        bucket: {email: test@gmail.com, password: "123456"}
        steps:
          - op: MockAsyncLoginOp
            with: {delay: 0.05}
          - op: MockAsyncLoadProfileOp
            with: {delay: 0.05}
        """

    /// The seed's missing-input scenario: the bucket has `email_address`, the op reads `email`.
    static let missingInput = """
        flow: missing-input
        bucket: {email_address: test@gmail.com, password: "123456"}
        steps:
          - op: MockAsyncLoginOp
            with: {delay: 0.05}
          - op: SimplePrintOp
            with: {message: NeverPrinted}
        """

    /// The seed's grouped upload between two print ops.
    static func groupedUpload(images: [String], maxConcurrent: Int, delay: Double = 0.05) -> String {
        """
        flow: grouped-upload
        bucket: {images: [\(images.joined(separator: ", "))]}
        steps:
          - op: SimplePrintOp
            with: {message: Step1}
          - group: {op: UploadSingleImageOp, input: images, output: imageURLs, maxConcurrent: \(maxConcurrent), allowFailure: false, with: {delay: \(delay)}}
          - op: SimplePrintOp
            with: {message: Step3}
        """
    }

    /// The seed's cases scenario: the `target` bucket value picks branch A or B.
    static let cases = """
        flow: cases
        bucket: {target: A}
        steps:
          - op: SimplePrintOp
            with: {message: Step1}
          - cases:
              key: target
              branches:
                A: [{op: SimplePrintOp, with: {message: Step2A1}}, {op: SimplePrintOp, with: {message: Step2A2}}]
                B: [{op: SimplePrintOp, with: {message: Step2B1}}]
          - op: SimplePrintOp
            with: {message: Step3}
        """

    /// `image-000` ... as bare YAML words.
    static func imageNames(_ count: Int) -> [String] {
        (0..<count).map { "image-" + String(repeating: "0", count: 3 - String($0).count) + String($0) }
    }

    /// The group output the stock upload op makes for `images`, as the summary prints an array.
    static func expectedURLs(_ images: [String]) -> String {
        "[" + images.map { "\"url_of_\($0)\"" }.joined(separator: ", ") + "]"
    }
}
