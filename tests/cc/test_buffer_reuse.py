"""graphrun-cc's tensor buffer cache (runner/core/tensor_memory.h): buffers of 32 MiB and more are
kept between runs while a plan lives, handed out again by size, and trimmed to what the last run
used. Runs of one process that alternate between sizes (batch 1, then batch 2, then batch 1 again)
must each get the answer numpy gives, including an op whose output starts zeroed (Pad) on a buffer
that held other values just before.

The models are built with graphdef (not the runner); every expected value is numpy float32
arithmetic made of exactly rounded steps (products, sums, maxima, zero padding), so the runner must
match it bit for bit.
"""

import numpy as np
import pytest

import graphdef as tf
from tests.support.cc_helpers import ok

pytestmark = pytest.mark.slow

ROWS, COLS = 2048, 4096  # [1, ROWS, COLS] float32 is 32 MiB, the smallest size the cache keeps


def block(x):
    """Large intermediates: exact float32 steps only. The first Pad's output has the second's
    size, so the second, which starts zero-filled, gets the first's buffer once its maximum is
    taken, non-zero where the second's border is."""
    scale = tf.reduce_max(tf.pad(x * np.float32(1.5), [[0, 0], [3, 0], [1, 2]]))
    y = tf.maximum(x * scale, np.float32(-0.25))
    padded = tf.pad(y * y + x, [[0, 0], [1, 2], [3, 0]])
    return padded[:, 1:-2, 3:] + padded[:, :-3, :-3]


def numpy_block(x):
    scale = np.max(x * np.float32(1.5))
    y = np.maximum(x * scale, np.float32(-0.25))
    padded = np.pad(y * y + x, [(0, 0), (1, 2), (3, 0)])
    return padded[:, 1:-2, 3:] + padded[:, :-3, :-3]


def alternating_model(tmp_path):
    """acc1 += block(x1) by `step1`, acc2 += block(x2) by `step2`; `init` zeroes both."""
    graph = tf.Graph()
    with graph.as_default():
        x1 = tf.placeholder(tf.float32, [1, ROWS, COLS], name="x1")
        x2 = tf.placeholder(tf.float32, [2, ROWS, COLS], name="x2")
        acc1 = tf.Variable(np.zeros([1, ROWS, COLS], np.float32), name="acc1")
        acc2 = tf.Variable(np.zeros([2, ROWS, COLS], np.float32), name="acc2")
        tf.assign_add(acc1, block(x1), name="step1")
        tf.assign_add(acc2, block(x2), name="step2")
        tf.identity(block(x1), name="out1")
        tf.identity(block(x2), name="out2")
        tf.global_variables_initializer()
    path = tmp_path / "alternating.pb"
    tf.save(graph, str(path))
    return path


def feeds(tmp_path, seed):
    rng = np.random.default_rng(seed)
    arrays = {"x1": rng.uniform(-2, 2, [1, ROWS, COLS]), "x2": rng.uniform(-2, 2, [2, ROWS, COLS])}
    arrays = {name: value.astype(np.float32) for name, value in arrays.items()}
    path = tmp_path / f"feeds{seed}.npz"
    np.savez(path, **arrays)
    return path, arrays


def saved_outputs(runner, model, out_dir, *args):
    """{file stem: ndarray} of the tensors a run saved with --out (too large to print)."""
    ok(runner, model, *args, "--out", out_dir)
    return {path.stem: np.load(path) for path in sorted(out_dir.glob("*.npy"))}


def test_runs_alternating_between_batch_sizes_match_numpy(runner, tmp_path):
    model = alternating_model(tmp_path)
    data, x = feeds(tmp_path, 0)
    # Separate runs in one process, in this order: batch 1, batch 2, batch 1 three times
    # (--steps repeats the last --run), then the fetches (batch 1 and 2 once more).
    got = saved_outputs(runner, model, tmp_path / "out", "--feeds", data, "--run", "init", "--run", "step1",
                        "--run", "step2", "--run", "step1", "--steps", 3, "--fetch", "acc1", "--fetch", "acc2",
                        "--fetch", "out1", "--fetch", "out2")
    one, two = numpy_block(x["x1"]), numpy_block(x["x2"])
    expected1 = np.zeros_like(one)
    for _ in range(4):
        expected1 = expected1 + one
    np.testing.assert_array_equal(got["acc1_0"], expected1)
    np.testing.assert_array_equal(got["acc2_0"], two)
    np.testing.assert_array_equal(got["out1_0"], one)
    np.testing.assert_array_equal(got["out2_0"], two)


def test_batch_2_after_batch_1_runs_matches_numpy(runner, tmp_path):
    # The other order: the batch-2 buffers are cached, trimmed away by batch-1 runs, made again.
    model = alternating_model(tmp_path)
    data, x = feeds(tmp_path, 1)
    got = saved_outputs(runner, model, tmp_path / "out", "--feeds", data, "--run", "init", "--run", "step2",
                        "--run", "step1", "--run", "step1", "--run", "step2", "--steps", 2, "--fetch", "acc1",
                        "--fetch", "acc2")
    one, two = numpy_block(x["x1"]), numpy_block(x["x2"])
    np.testing.assert_array_equal(got["acc1_0"], one + one)
    np.testing.assert_array_equal(got["acc2_0"], two + two + two)
