"""A model whose weights pass protobuf's 2 GB limit, written and run cheaply: a 2.1 GiB float32
embedding table that is zeros except for a few rows. graphdef's writer puts it in a weights file by
itself (leaving holes for the zeros, so the disk holds a few pages), and graphrun and graphrun-cc
gather rows out of it through the mapping: their peak memory stays far below the table's size."""

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import graphdef as tf
from graphdef.wire import serialize
from tests.support.cc_helpers import REPO
from tests.conformance.replay import from_json_output
from tests.support.numerics_policy import assert_same

pytestmark = pytest.mark.slow

ROWS, WIDTH = 2_100_000, 256  # 2.0 GiB + 3.6 MiB of float32
TABLE_BYTES = ROWS * WIDTH * 4
PICKED = np.array([3, 1_234_567, ROWS - 1, 3], np.int32)
MIB = 1 << 20
GRAPHRUN = "import sys; from graphdef.graphrun.cli import main; sys.exit(main(sys.argv[1:]))"

# runs one command and reports its peak resident set (the only child it waits for) on stderr
PEAK_RSS = ("import resource, subprocess, sys\n"
            "proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
            "sys.stdout.write(proc.stdout)\n"
            "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
            "sys.stderr.write(proc.stderr + f'peak_rss_kib={peak} exit={proc.returncode}\\n')\n")


def _peak_run(*argv):
    proc = subprocess.run([sys.executable, "-c", PEAK_RSS, *map(str, argv)], capture_output=True, text=True,
                          timeout=120, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    *errors, last = proc.stderr.splitlines()
    peak, code = (int(field.split("=")[1]) for field in last.split())
    assert code == 0, "\n".join(errors)
    return json.loads(proc.stdout), peak * 1024


def test_a_model_over_2_gb_runs_mapped_in_both_runtimes(tmp_path, cc_runner):
    start = time.monotonic()
    table = np.zeros((ROWS, WIDTH), np.float32)  # untouched pages: no memory until written
    rows = np.random.default_rng(2).standard_normal((3, WIDTH)).astype(np.float32)
    table[PICKED[:3]] = rows
    table.flags.writeable = False  # the graph keeps it as it is, without a copy
    g = tf.Graph()
    with g.as_default():
        ids = tf.placeholder(tf.int32, [None], name="ids")
        tf.gather(tf.constant(table, name="embeddings"), ids, name="picked")
    model = tmp_path / "big.pb"
    serialize.save(g, model)  # over the limit: the weights go outside by themselves
    del g, table
    weights = tmp_path / "big.weights"
    assert model.stat().st_size < 4096
    assert weights.stat().st_size > (1 << 31) and weights.stat().st_size >= TABLE_BYTES
    assert weights.stat().st_blocks * 512 < 16 * MIB  # holes: the zeros take no disk

    feed = ["--feed", f"ids={json.dumps(PICKED.tolist())}", "--json"]
    expected = np.concatenate([rows, rows[:1]])
    python, python_peak = _peak_run(sys.executable, "-c", GRAPHRUN, model, *feed)
    cc, cc_peak = _peak_run(cc_runner, model, *feed)
    for result in (python, cc):
        (out,) = result["outputs"]
        name, value = from_json_output(out)
        assert name == "picked:0"
        assert_same(value, expected)  # a gather copies: exact
    print(f"\nweights {TABLE_BYTES / MIB:.0f} MiB; peak RSS graphrun {python_peak / MIB:.0f} MiB, "
          f"graphrun-cc {cc_peak / MIB:.0f} MiB; {time.monotonic() - start:.1f} s")
    # flat memory: the runtime itself plus the few pages the gather touched, not the table
    assert python_peak < 600 * MIB < TABLE_BYTES / 3
    assert cc_peak < 200 * MIB
    weights.unlink()
