"""`graphrun batch` over 10 million rows through a small MLP, against Session.run in a Python loop.

    .venv/bin/python benchmarks/bench_batch.py [--rows N] [--batch-size B] [--repeat R]

Targets (issue 5): `graphrun batch` reaches at least 80% of the throughput of calling
Session.run in a Python loop on batches already in memory, and its peak RSS does not grow
with the dataset (it is measured on N/10 and N rows). The model is tests/models/mlp.pb
(16 -> 32 -> 32 -> 1). Each dataset is written to a temporary directory first, so it is in
the page cache for both contenders; each measurement is the best of --repeat runs.
Figures are printed, never asserted.

Every step runs in a child process, and this parent never imports numpy: a child's peak
RSS as the kernel reports it starts from its parent's size at the fork, so a small parent
keeps the measured peaks those of graphrun batch itself. The children run BLAS on one
thread: the matrices are small, and on a busy machine spinning BLAS threads make timings
swing several-fold for both contenders alike.
"""

import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODEL = ROOT / "tests" / "models" / "mlp.pb"
GRAPHRUN = pathlib.Path(sys.executable).parent / "graphrun"
FEATURES = 16
SINGLE_THREADED = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}


# -- the children -------------------------------------------------------------------------

def child_write(path, rows, chunk=1_000_000):
    """rows x 16 float32, written a chunk at a time and synced: a dataset already on disk.

    Without the sync, the kernel would still be writing it back during the measurements,
    and throttle the output writes of graphrun batch.
    """
    import numpy as np
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(rows, FEATURES))
    rng = np.random.default_rng(0)
    for start in range(0, rows, chunk):
        stop = min(start + chunk, rows)
        out[start:stop] = rng.standard_normal((stop - start, FEATURES), dtype=np.float32)
    out.flush()
    del out
    with open(path, "rb+") as f:
        os.fsync(f.fileno())


def child_loop(path, batch_size, expected_out):
    """Prints the seconds Session.run takes over every batch of the preloaded dataset."""
    import numpy as np
    sys.path.insert(0, str(ROOT))
    import graphdef as tf
    graph = tf.load(MODEL)
    x, score = graph.get_tensor_by_name("x:0"), graph.get_tensor_by_name("output/score:0")
    preloaded = np.load(path)                        # fully in memory, not timed
    batches = [preloaded[i:i + batch_size] for i in range(0, len(preloaded), batch_size)]
    with tf.Session(graph=graph) as sess:
        sess.run(score, {x: batches[0]})             # plan once, as graphrun batch does on its first batch
        start = time.perf_counter()
        results = [sess.run(score, {x: batch}) for batch in batches]
        seconds = time.perf_counter() - start
    np.save(expected_out, np.concatenate(results))
    print(seconds)


def child_same(a, b):
    import numpy as np
    print(np.array_equal(np.load(a, mmap_mode="r"), np.load(b, mmap_mode="r")))


# -- the parent ---------------------------------------------------------------------------

def child(*args):
    done = subprocess.run([sys.executable, __file__, "--child", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, **SINGLE_THREADED})
    if done.returncode != 0:
        raise SystemExit(f"child {args[0]} failed: {done.stderr.strip()}")
    return done.stdout.strip()


def run_batch(data, output, batch_size):
    """(wall seconds of the process, seconds it reports streaming, peak RSS in MiB)."""
    command = [str(GRAPHRUN), "batch", str(MODEL), "--input", f"x={data}", "--output", str(output),
               "--batch-size", str(batch_size)]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env={**os.environ, **SINGLE_THREADED})
    out, err = process.stdout.read().decode(), process.stderr.read().decode()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"graphrun batch failed ({process.returncode}): {err.strip()}")
    streaming = float(re.search(r"rows in ([\d.]+) s", out).group(1))
    return wall, streaming, usage.ru_maxrss / 1024   # Linux reports KiB


def best_batch(data, output, batch_size, repeat):
    runs = [run_batch(data, output, batch_size) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs), max(r[2] for r in runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows, small = args.rows, args.rows // 10
    mib = rows * FEATURES * 4 / 2 ** 20
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        tmp = pathlib.Path(tmp)
        print(f"writing {rows:,} and {small:,} rows x {FEATURES} float32 ({mib:,.0f} MiB and {mib / 10:,.0f} MiB) ...")
        child("write", tmp / "big.npy", rows)
        child("write", tmp / "small.npy", small)
        small_wall, small_stream, small_rss = best_batch(tmp / "small.npy", tmp / "small_out.npy", args.batch_size,
                                                         args.repeat)
        big_wall, big_stream, big_rss = best_batch(tmp / "big.npy", tmp / "big_out.npy", args.batch_size, args.repeat)
        loop = min(float(child("loop", tmp / "big.npy", args.batch_size, tmp / "loop_out.npy"))
                   for _ in range(args.repeat))
        same = child("same", tmp / "big_out.npy", tmp / "loop_out.npy")

    print(f"model {MODEL.relative_to(ROOT)}, batch size {args.batch_size}, best of {args.repeat}, "
          f"{os.cpu_count()} CPUs")
    print(f"{'contender':40s} {'rows':>11s} {'seconds':>8s} {'rows/s':>11s} {'peak RSS':>9s}")
    print(f"{'graphrun batch, whole process':40s} {rows:11,d} {big_wall:8.2f} {rows / big_wall:11,.0f} "
          f"{big_rss:6.0f}MiB")
    print(f"{'  of which streaming (its own report)':40s} {rows:11,d} {big_stream:8.2f} {rows / big_stream:11,.0f}")
    print(f"{'graphrun batch, dataset / 10':40s} {small:11,d} {small_wall:8.2f} {small / small_wall:11,.0f} "
          f"{small_rss:6.0f}MiB")
    print(f"{'Session.run loop, preloaded batches':40s} {rows:11,d} {loop:8.2f} {rows / loop:11,.0f}  (all in RAM)")
    for label, seconds in (("whole process", big_wall), ("streaming", big_stream)):
        ratio = loop / seconds
        print(f"throughput, {label}: {ratio:.0%} of the Session.run loop (target >= 80%): "
              f"{'ok' if ratio >= 0.8 else 'MISSED'}")
    growth = big_rss - small_rss
    print(f"memory: peak RSS {small_rss:.0f} MiB for {small:,} rows, {big_rss:.0f} MiB for {rows:,} rows "
          f"(+{growth:.0f} MiB for {mib * 0.9:,.0f} MiB more data): {'flat' if growth < 0.1 * mib else 'GROWS'}")
    print(f"results identical to the Session.run loop: {same}")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        {"write": lambda p, n: child_write(p, int(n)),
         "loop": lambda p, b, o: child_loop(p, int(b), o),
         "same": child_same}[sys.argv[2]](*sys.argv[3:])
    else:
        main()
