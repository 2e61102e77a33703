#!/usr/bin/env python3
"""Writes a timeline page filled with a made-up but realistic run, to try the page without a cluster.

    timeline-sample.py TEMPLATE ATTEMPTS WORKERS OUT.html [--seed N] [--succeed]

TEMPLATE is Sources/FlowCommandLine/Timeline/timeline.html. The run: a serial ListFilesOp, then a
group of UploadFileOp elements fanned out to WORKERS workers of 4 slots each, until about ATTEMPTS
attempts are made; some attempts fail and are tried again (up to 3 tries), one element fails for
good (unless --succeed), a few are cancelled, and with 2 or more workers the last one is lost
part-way through (its running attempts are "lost" and sent again elsewhere). Attempts keep a log
line while there are at most 20,000 of them (failed ones always do), as the Swift recorder does.
One failed attempt logs `</script>` to check the escaping.

The data goes into the page the way the Swift side (TimelinePage.render) puts it: compact JSON,
every `<` written `\\u003c`, replacing the one placeholder. Prints the number of attempts.
"""

import argparse
import heapq
import json
import random
import sys

PLACEHOLDER = '{"__FLOW_TIMELINE_DATA__":true}'
STATES = ["succeeded", "failed", "retried", "cancelled", "lost"]
SLOTS = 4
LOGGED_ATTEMPTS = 20_000


def build(attempts_wanted, worker_count, rng, succeed):
    names = [f"worker-{i + 1}" if i % 3 != 2 else f"host-{chr(97 + i % 26)}-{4000 + 37 * i}" for i in range(worker_count)]
    cols = {k: [] for k in ("op", "element", "attempt", "worker", "startMs", "endMs", "state", "log")}
    log_all = attempts_wanted <= LOGGED_ATTEMPTS

    def add(op, element, attempt, worker, start, end, state, log):
        cols["op"].append(op)
        cols["element"].append(element)
        cols["attempt"].append(attempt)
        cols["worker"].append(worker)
        cols["startMs"].append(round(start, 3))
        cols["endMs"].append(round(end, 3))
        cols["state"].append(STATES.index(state))
        keep = log_all or state == "failed"
        cols["log"].append(log[:300] if keep and log is not None else None)

    events = [{"kind": "workerJoined", "worker": w, "atMs": 0.0,
               "text": f"worker {names[w]} joined with {SLOTS} slots"} for w in range(worker_count)]
    # The serial op on the first worker.
    list_end = 2.0 + rng.random() * 3
    add(0, -1, 1, 0, 0.4, list_end, "succeeded", "listed files in /data/in")
    group_start = list_end + 0.2

    # Task durations: an upload of a few ms for big runs, longer for small ones (so the picture is readable).
    mean = 4.0 if attempts_wanted > 1000 else 180.0
    per_slot = max(1, attempts_wanted // max(1, worker_count * SLOTS))
    expected_end = group_start + per_slot * mean * 1.1
    lost_worker = worker_count - 1 if worker_count >= 2 else None
    lost_at = group_start + (expected_end - group_start) * 0.4
    doomed = 3 if not succeed else None
    fail_p = 0.01 if attempts_wanted > 1000 else 0.12

    free = [(group_start + rng.random() * 0.5, w, s) for w in range(worker_count) for s in range(SLOTS)]
    heapq.heapify(free)
    ready = []  # (ready time, element, attempt) of attempts to make again
    next_element = 0
    failed_elements = 0
    lost_sent_again = 0
    group_end = group_start
    made = 1
    while free:
        t, w, s = heapq.heappop(free)
        if w == lost_worker and t >= lost_at:
            continue  # the lost worker takes nothing more
        if ready and (ready[0][0] <= t or made >= attempts_wanted):
            ready_at, element, attempt = heapq.heappop(ready)
            t = max(t, ready_at)
        elif made < attempts_wanted:
            element, attempt = next_element, 1
            next_element += 1
        else:
            continue
        if w == lost_worker and t >= lost_at:
            heapq.heappush(ready, (t, element, attempt))
            continue
        made += 1
        size = rng.lognormvariate(1.0, 0.6)
        end = t + mean * rng.lognormvariate(0, 0.45)
        name = f"file-{element:06d}.bin"
        if w == lost_worker and end > lost_at:
            add(1, element, attempt, w, t, lost_at, "lost", f"uploading {name}: part 1 of 3")
            heapq.heappush(ready, (lost_at + 1.0, element, attempt + 1))
            lost_sent_again += 1
            group_end = max(group_end, lost_at)
            continue
        fails = element == doomed or rng.random() < fail_p
        if fails and attempt < 3:
            text = "HTTP 503 from storage for " + name if element != doomed else "</script><b>not html</b> for " + name
            add(1, element, attempt, w, t, end, "retried", text)
            heapq.heappush(ready, (end + 50.0 * attempt, element, attempt + 1))
        elif fails:
            add(1, element, attempt, w, t, end, "failed", f"HTTP 500 from storage for {name}: gave up after {attempt} tries")
            failed_elements += 1
        elif rng.random() < 0.002:
            end = t + (end - t) * 0.3
            add(1, element, attempt, w, t, end, "cancelled", f"upload of {name} cancelled")
        else:
            add(1, element, attempt, w, t, end, "succeeded", f"uploaded {name} ({size:.1f} MB)")
        group_end = max(group_end, end)
        heapq.heappush(free, (end + rng.random() * 0.05, w, s))
    if lost_worker is not None:
        events.append({"kind": "workerLost", "worker": lost_worker, "atMs": round(lost_at, 3),
                       "text": f"worker {names[lost_worker]} stopped answering; {lost_sent_again} tasks sent again"})
    duration = group_end + 1.5
    steps = [
        {"name": "ListFilesOp", "kind": "serial", "startMs": 0.0, "endMs": round(list_end + 0.1, 3)},
        {"name": "UploadFileOp \u2192 urls", "kind": "group", "startMs": round(group_start, 3), "endMs": round(group_end + 0.5, 3),
         "elements": next_element, "failed": failed_elements},
    ]
    return {
        "version": 1,
        "flow": "upload.yaml",
        "startedAt": "2026-11-24T10:00:00.000Z",
        "durationMs": round(duration, 3),
        "succeeded": failed_elements == 0,
        "error": None if failed_elements == 0 else f"UploadFileOp: {failed_elements} of {next_element} elements failed",
        "workers": names,
        "slots": [SLOTS] * worker_count,
        "ops": ["ListFilesOp", "UploadFileOp"],
        "steps": steps,
        "attempts": cols,
        "stateNames": STATES,
        "events": events,
    }


def fill(template, data):
    """The page for `data`, as TimelinePage.render writes it."""
    if template.count(PLACEHOLDER) != 1:
        sys.exit(f"the template holds the placeholder {template.count(PLACEHOLDER)} times, not once")
    tag = '<script id="flow-timeline-data" type="application/json">' + PLACEHOLDER + "</script>"
    if tag not in template:
        sys.exit("the placeholder is not alone in the flow-timeline-data script element")
    json_text = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    return template.replace(PLACEHOLDER, json_text, 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("template")
    parser.add_argument("attempts", type=int)
    parser.add_argument("workers", type=int)
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--succeed", action="store_true", help="no element fails for good")
    args = parser.parse_args()
    with open(args.template, encoding="utf-8") as f:
        template = f.read()
    data = build(max(1, args.attempts), max(1, args.workers), random.Random(args.seed), args.succeed)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(fill(template, data))
    print(len(data["attempts"]["startMs"]))


if __name__ == "__main__":
    main()
