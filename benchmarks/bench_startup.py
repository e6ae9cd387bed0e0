"""Process start to printed output for `graphrun model.pb --feed x=10`, Python vs C++.

    .venv/bin/python benchmarks/bench_startup.py

Targets (the portable-slice issue): graphrun under 0.5 s, graphrun-cc under 50 ms.
Each command runs several times; the median is reported, and both runners' output must agree.
"""

import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
GRAPHRUN = pathlib.Path(sys.executable).parent / "graphrun"
sys.path.insert(0, str(ROOT))
from graphdef._native import executable_path  # noqa: E402

RUNNER = executable_path()  # $GRAPHRUN_CC, else the graphrun-cc this graphdef carries
RUNS = 15


def make_model(path):
    import graphdef as tf
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        a = tf.constant(15.0, name="a")
        tf.divide(a * x, a + x, name="Divide")
    tf.save(g, path)


def median_seconds(command):
    times, outputs = [], set()
    for _ in range(RUNS):
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(f"{command[0]} failed: {done.stderr.strip()}")
        outputs.add(done.stdout)
    return statistics.median(times), outputs.pop()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.pb")
        make_model(model)
        rows = []
        for label, exe, target in (("graphrun", GRAPHRUN, 0.5), ("graphrun-cc", RUNNER, 0.05)):
            if not exe.exists():
                print(f"{label}: {exe} is missing (run make setup)")
                continue
            seconds, out = median_seconds([str(exe), model, "--feed", "x=10"])
            rows.append((label, seconds, target, out.strip()))
    print(f"{'runner':12s} {'median':>10s} {'target':>8s}  output")
    for label, seconds, target, out in rows:
        verdict = "ok" if seconds <= target else "MISSED"
        print(f"{label:12s} {seconds * 1000:8.1f}ms {target * 1000:6.0f}ms  {out}  {verdict}")
    if len({r[3] for r in rows}) > 1:
        print("the runners disagree")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
