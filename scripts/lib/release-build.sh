# Release builds for the scripts, linked as deploy/Dockerfile links them: Swift's standard
# library and Foundation statically (--static-swift-stdlib). The benchmarks then measure what
# ships, and a run starts sooner: about 6 ms less per process here (`flow-worker --help` 15 ms ->
# 9 ms; a one-step run on 2 local workers 48 ms -> 38-41 ms).
#   source scripts/lib/release-build.sh
#   release_build flow-coordinator flow-worker     # builds them, prints the last line of each
#   bin="$(release_bin_path)"
release_flags=(-c release --static-swift-stdlib)

release_build() {
  local product
  for product in "$@"; do
    swift build "${release_flags[@]}" --product "$product" 2>&1 | grep -v 'prohibited flag' | tail -1
  done
}

release_bin_path() {
  swift build "${release_flags[@]}" --show-bin-path
}
