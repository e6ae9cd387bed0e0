"""graphrun-cc's elementwise kernels on tensors large enough to take their fast paths: four float32
lanes at a time, split over the cores, in the input's buffer when nothing else holds it. Their
arithmetic is exactly specified (one IEEE operation, or a clamp), so the oracle is numpy, bit for
bit, including NaN, infinities and the sign of zero (Relu6(-0.0) is +0.0)."""

import numpy as np
import pytest

from tests.support.cc_helpers import Graph, outputs
from tests.support.numerics_policy import assert_same

pytestmark = pytest.mark.slow

RNG = np.random.default_rng(5)
SHAPE = (2, 70, 70, 33)  # 323,400 elements: over the threading threshold, and not a multiple of 4 per row


def special_values():
    x = (RNG.standard_normal(SHAPE) * 5).astype(np.float32)
    flat = x.reshape(-1)
    picks = RNG.choice(flat.size, 4000, replace=False)
    flat[picks[:1000]] = np.nan
    flat[picks[1000:2000]] = -0.0
    flat[picks[2000:2500]] = np.inf
    flat[picks[2500:3000]] = -np.inf
    flat[picks[3000:]] = 6.0
    return x


def relu6_oracle(x):
    low = np.where((x > 0) | np.isnan(x), x, np.float32(0.0))
    return np.where((low < 6) | np.isnan(low), low, np.float32(6.0)).astype(np.float32)


def test_relu6_keeps_nan_and_gives_positive_zero(runner, tmp_path):
    x = special_values()
    g = Graph()
    g.placeholder("x", np.float32, list(SHAPE))
    g.op("n", "Neg", ["x"], np.float32)  # a value nothing else holds: Relu6 may take its buffer
    g.op("r", "Relu6", ["n"], np.float32)
    g.op("r2", "Relu6", ["x"], np.float32)  # the feed: must not be overwritten
    g.op("back", "Neg", ["x"], np.float32)
    model = g.save(tmp_path / "relu6.pb")
    np.save(tmp_path / "x.npy", x)
    got = outputs(runner, model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--fetch", "r", "--fetch", "r2",
                  "--fetch", "back")
    assert_same(got["r:0"], relu6_oracle(-x))
    assert_same(got["r2:0"], relu6_oracle(x))
    assert_same(got["back:0"], -x)


@pytest.mark.parametrize("op, fn", [("Mul", np.multiply), ("AddV2", np.add), ("Sub", np.subtract),
                                    ("RealDiv", np.divide)])
@pytest.mark.parametrize("other_shape", [(33,), (1, 1, 1, 33), (), SHAPE])
def test_binary_ops_broadcast_rows_and_scalars_exactly(runner, tmp_path, op, fn, other_shape):
    x = special_values()
    c = (RNG.standard_normal(other_shape) + 0.5).astype(np.float32)
    g = Graph()
    g.placeholder("x", np.float32, list(SHAPE))
    g.const("c", c)
    g.op("n", "Neg", ["x"], np.float32)
    g.op("xc", op, ["n", "c"], np.float32)
    g.op("cx", op, ["c", "n"], np.float32)
    model = g.save(tmp_path / "binary.pb")
    np.save(tmp_path / "x.npy", x)
    got = outputs(runner, model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--fetch", "xc", "--fetch", "cx")
    with np.errstate(all="ignore"):
        assert_same(got["xc:0"], fn(-x, c).astype(np.float32))
        assert_same(got["cx:0"], fn(c, -x).astype(np.float32))
