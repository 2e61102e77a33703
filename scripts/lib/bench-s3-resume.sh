# The resumed multipart upload of `scripts/bench-s3 resume [SIZE]`, sourced by it: needs $bin,
# $work, $endpoint (moto) and the AWS_* credentials it sets.
#
# One sparse file of SIZE in 64 MiB parts, 4 in flight, through a counting proxy: first uploaded
# whole (the baseline), then again by a standing worker killed with SIGKILL once half the parts are
# stored, and finished by a second worker. Prints the part bytes each run sent and its wall time.

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Waits up to 60 s for a listener on port $1; $2, when given, is a log to show if none comes.
wait_port() {
  for _ in $(seq 1 600); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return; sleep 0.1; done
  echo "nothing listens on $1" >&2; [ -n "${2:-}" ] && cat "$2" >&2; exit 1
}
proxy_stat() { python3 -c "import json, sys, urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1] + '/_proxy_stats'))[sys.argv[2]])" "$proxy" "$1"; }
part_puts() { python3 -c "import json, sys, urllib.request; print(sum(json.load(urllib.request.urlopen(sys.argv[1] + '/_proxy_stats'))['parts'].values()))" "$proxy"; }
delete_object() { python3 -c "
import boto3, sys
boto3.client('s3', endpoint_url=sys.argv[1], region_name='us-east-1').delete_object(Bucket='bench', Key=sys.argv[2])" "$endpoint" "$1"; }
stamp() { python3 -c 'import time; print(time.time())'; }

bench_resume() {
  local size="$1" bytes parts part=$((64 << 20))
  local proxy_port; proxy_port=$(free_port)
  mkfifo "$work/proxy-stdin"
  python3 Tests/FlowTestSupport/Resources/s3_resume_proxy.py proxy "$proxy_port" "$endpoint" < "$work/proxy-stdin" > "$work/proxy.log" 2>&1 &
  exec 8> "$work/proxy-stdin"
  wait_port "$proxy_port"
  proxy="http://127.0.0.1:$proxy_port"
  mkdir -p "$work/src"
  truncate -s "$(numfmt --from=iec "$size")" "$work/src/big.bin"
  touch -d '-1 minute' "$work/src/big.bin"
  bytes=$(stat -c %s "$work/src/big.bin")
  parts=$(( (bytes + part - 1) / part ))
  cat > "$work/resume.yaml" <<YAML
flow: s3-bench-resume
steps:
  - op: ListFilesOp
    with: {path: "$work/src"}
  - group:
      op: UploadFileOp
      input: files
      output: objects
      with: {url: "s3://bench/resume/", endpoint: "$proxy", partSize: 64MiB, partConcurrency: 4, timeout: 7200}
YAML
  # The default heartbeat (1 s, liveness 3): moto holds the CPUs, and a faster one can see a busy
  # worker as lost, which runs its task twice.
  local fast=()
  echo "$size sparse file, $parts parts of 64 MiB, 4 in flight, one standing worker, to moto through a counting proxy"
  for mode in whole killed; do
    local before_bytes before_puts before_stored before_creates port coordinator w1 w2="" start killed_at="" end
    before_bytes=$(proxy_stat partBytes); before_puts=$(part_puts); before_stored=$(proxy_stat stored); before_creates=$(proxy_stat creates)
    port=$(free_port)
    start=$(stamp)
    "$bin/flow-coordinator" run "$work/resume.yaml" --bind "tcp://127.0.0.1:$port" --quiet ${fast[@]+"${fast[@]}"} > "$work/run-$mode.log" 2>&1 &
    coordinator=$!
    wait_port "$port" "$work/run-$mode.log"
    "$bin/flow-worker" --connect "tcp://127.0.0.1:$port" --name w1 ${fast[@]+"${fast[@]}"} --log-level warning > "$work/w1-$mode.log" 2>&1 &
    w1=$!
    if [ "$mode" = killed ]; then
      while [ "$(( $(proxy_stat stored) - before_stored ))" -lt $((parts / 2)) ]; do sleep 0.05; done
      kill -KILL "$w1"; wait "$w1" 2>/dev/null || true
      killed_at=$(stamp)
      "$bin/flow-worker" --connect "tcp://127.0.0.1:$port" --name w2 ${fast[@]+"${fast[@]}"} --log-level warning > "$work/w2-$mode.log" 2>&1 &
      w2=$!
    fi
    wait "$coordinator" || { cat "$work/run-$mode.log" >&2; kill -TERM "$w1" $w2 2>/dev/null; exit 1; }
    end=$(stamp)
    kill -TERM "$w1" $w2 2>/dev/null || true
    wait "$w1" $w2 2>/dev/null || true
    python3 - "$mode" "$bytes" "$part" "$(( $(proxy_stat partBytes) - before_bytes ))" "$(( $(part_puts) - before_puts ))" "$start" "$end" "${killed_at:-0}" "$(( $(proxy_stat creates) - before_creates ))" <<'PY'
import sys
creates = int(sys.argv[9])
mode, size, part, sent, puts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
start, end, killed = float(sys.argv[6]), float(sys.argv[7]), float(sys.argv[8])
gib = 1 << 30
if mode == "whole":
    print("  uninterrupted:         %6.2f GiB sent in %d part PUTs (%d upload started), %6.1f s" % (sent / gib, puts, creates, end - start))
else:
    bound = size + 4 * part
    print("  worker killed at half: %6.2f GiB sent in %d part PUTs (%d upload started; bound: file + 4 parts = %.2f GiB: %s), "
          "%6.1f s in all (%.1f s to the kill, %.1f s after it)" % (sent / gib, puts, creates, bound / gib,
                                                                    "within" if sent <= bound else "OVER", end - start, killed - start, end - killed))
PY
    delete_object resume/big.bin
  done
  grep -h -E "resuming multipart upload|continuing multipart upload .* from its checkpoint" "$work"/run-killed.log | sed 's/^/  /' | head -2 || true
}
