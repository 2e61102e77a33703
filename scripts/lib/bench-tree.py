"""ListFilesOp over a tree of empty files in tmpfs, feeding a group of no-op elements (issue 49).

Prints: find's time over the tree; ListFilesOp alone (a one-step run, whole list, the op's own
span from its --json record); the op before a group (SleepOp ms 0, maxConcurrent 512, 2 workers
with 256 slots): when the first element started after the run's start, the op's span, the whole
run, and the coordinator's peak RSS (wait4). Arguments: bin tree work files.
"""
import json, os, sqlite3, subprocess, sys, time
from datetime import datetime

bin, tree, work, files = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
coordinator = os.path.join(bin, "flow-coordinator")
folders = max(1, files // 1000)
start = time.monotonic()
for folder in range(folders):
    path = os.path.join(tree, f"d{folder:04d}")
    os.mkdir(path)
    for index in range(files // folders):
        os.close(os.open(os.path.join(path, f"f{index:05d}"), os.O_CREAT | os.O_WRONLY, 0o644))
print(f"tree: {files:,} empty files in {folders:,} folders in tmpfs, made in {time.monotonic() - start:.1f} s")

def own_peak(pid):
    """The process's own peak RSS in MB (VmHWM), without its children's."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0

def timed(args, **kwargs):
    """Wall time and the process's own peak RSS (VmHWM read every 50 ms: wait4's ru_maxrss also
    counts the local workers it reaped)."""
    start = time.monotonic()
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)
    peak = 0.0
    global workers_peak
    workers_peak = 0.0
    while process.poll() is None:
        peak = max(peak, own_peak(process.pid))
        for task in os.listdir(f"/proc/{process.pid}/task") if os.path.exists(f"/proc/{process.pid}/task") else []:
            try:
                with open(f"/proc/{process.pid}/task/{task}/children") as f:
                    for child in f.read().split():
                        workers_peak = max(workers_peak, own_peak(int(child)))
            except OSError:
                pass
        time.sleep(0.05)
    seconds = time.monotonic() - start
    if process.returncode != 0:
        print("  failed with", process.returncode)
    return seconds, peak

find_times = [timed(["find", tree, "-type", "f", "-printf", "%s %T@ %p\\n"])[0] for _ in range(3)]
find_time = sorted(find_times)[1]
print(f"find -type f -printf '%s %T@ %p\\n': {find_time:.2f} s (median of 3)")

def flow(name, group):
    path = os.path.join(work, name + ".yaml")
    text = f"flow: {name}\nsteps:\n  - op: ListFilesOp\n    with: {{path: {tree}, recursive: true}}\n"
    if group:
        text += "  - group:\n      op: SleepOp\n      input: files\n      maxConcurrent: 512\n      with: {ms: 0}\n"
    with open(path, "w") as f:
        f.write(text)
    return path

def parse(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()

def report(path):
    with open(path) as f:
        data = json.load(f)
    operations = data["operations"]
    listing = next(op for op in operations if op["op"] == "ListFilesOp")
    elements = [op for op in operations if op.get("groupIndex") is not None]
    first = min((parse(op["startedAt"]) for op in elements), default=None)
    return data, parse(listing["startedAt"]), parse(listing["finishedAt"]), first

alone = os.path.join(work, "alone.json")
seconds, rss = timed([coordinator, "run", flow("alone", False), "--workers", "1", "--quiet", "--no-journal", "--json", alone])
_, started, finished, _ = report(alone)
op_alone = finished - started
print(f"ListFilesOp alone (whole list): op {op_alone:.2f} s ({find_time / op_alone:.2f}x find's speed), run {seconds:.1f} s, "
      f"coordinator peak RSS {rss:.0f} MB")

# Without --json (which keeps every element's record): the journal says when each element started.
seconds, rss = timed([coordinator, "run", flow("streamed", True), "--workers", "2", "--concurrency", "256", "--quiet"])
runs = os.path.join(os.environ["XDG_STATE_HOME"], "flow", "runs")
journal = sqlite3.connect(os.path.join(runs, next(name for name in os.listdir(runs) if name.endswith(".sqlite"))))
run_start = journal.execute("SELECT started_at FROM run").fetchone()[0]
first = journal.execute("SELECT MIN(started_at) FROM result WHERE element IS NOT NULL").fetchone()[0]
elements = journal.execute("SELECT COUNT(*) FROM result WHERE element IS NOT NULL").fetchone()[0]
print(f"ListFilesOp into a group: first element started {first - run_start:.2f} s after the run started; "
      f"{elements:,} elements, run {seconds:.1f} s ({files / seconds:,.0f} elements/s), coordinator peak RSS {rss:.0f} MB, a worker's {workers_peak:.0f} MB")
