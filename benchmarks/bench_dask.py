"""graphdef.Runner on a Dask LocalCluster: 2 single-threaded workers against 1, on the same job.

    .venv/bin/python benchmarks/bench_dask.py [--rows N] [--chunk C] [--repeat R]

Target (issue 5): 2 workers reach at least 1.6x the throughput of 1. The job scores
--rows rows of 16 random features (generated on the workers, in chunks of --chunk rows)
through tests/models/mlp.pb with Array.map_blocks(runner), then averages the scores. Each
cluster is started, warmed up (every worker loads the model once), and then timed on the
job --repeat times; the best time counts. Workers run BLAS on one thread, so "one worker"
means one core. Needs the optional packages dask and distributed. Figures are printed,
never asserted.
"""

import argparse
import os
import pathlib
import sys
import time

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"  # before numpy loads, here and in the workers this process starts

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
MODEL = ROOT / "tests" / "models" / "mlp.pb"


def job(runner, rows, chunk):
    import dask.array as da
    x = da.random.default_rng(0).random((rows, 16), dtype="float32", chunks=(chunk, 16))
    scores = x.map_blocks(runner, chunks=(x.chunks[0], (1,)), dtype="float32")
    return scores.mean()


def timed(workers, runner, rows, chunk, repeat):
    from dask.distributed import Client, LocalCluster
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.wait_for_workers(workers)
        job(runner, chunk * workers, chunk).compute()          # every worker loads the model
        best, value = float("inf"), None
        for _ in range(repeat):
            start = time.perf_counter()
            value = float(job(runner, rows, chunk).compute())
            best = min(best, time.perf_counter() - start)
    return best, value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--chunk", type=int, default=250_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    try:
        import dask.array  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        print("dask and distributed are not installed (pip install dask distributed); skipped")
        return
    from graphdef.client.runner_api import Runner
    runner = Runner(MODEL)
    results = {n: timed(n, runner, args.rows, args.chunk, args.repeat) for n in (1, 2)}
    print(f"job: {args.rows:,} rows x 16 through {MODEL.relative_to(ROOT)} in chunks of {args.chunk:,}, "
          f"best of {args.repeat}, {os.cpu_count()} CPUs")
    print(f"{'workers':>8s} {'seconds':>8s} {'rows/s':>12s}  mean score")
    for n, (seconds, value) in results.items():
        print(f"{n:8d} {seconds:8.2f} {args.rows / seconds:12,.0f}  {value:.6f}")
    speedup = results[1][0] / results[2][0]
    print(f"speedup with 2 workers: {speedup:.2f}x (target >= 1.6x): {'ok' if speedup >= 1.6 else 'MISSED'}")
    print(f"same answer: {results[1][1] == results[2][1]}")


if __name__ == "__main__":
    main()
