"""graphrun-cc's fuse_elementwise pass: chains of float32 elementwise ops on one tensor and scalar Consts
run as one _FusedElementwise node, with the unfused graph's answer bit for bit (each step is its op's own
arithmetic), and only where nothing outside the chain can see an intermediate value.

Every graph is built with the generated protobuf classes; the oracle is the same graph run with
--no-optimize, and numpy worked out in the test for the GELU's formula.
"""

import numpy as np
import pytest

import json

from tests.support.cc_helpers import Graph, ok, run_cc
from tests.support.numerics_policy import assert_same
from tests.cc.passes.test_optimize import run

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -3.0, 2.5, 1e20, -1e20, 9.5, -0.25, 6.9814636e12],
                   np.float32)


def fused_count(runner, model, tmp_path, *fetches):
    """How many ops fuse_elementwise fused when the run fetches `fetches` (0 when it did nothing)."""
    np.save(tmp_path / "x.npy", inputs())
    doc = json.loads(ok(runner, "bench", model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--runs", "1", "--warmup", "0",
                        "--profile", "--json", *[a for f in fetches for a in ("--fetch", f)]))
    counts = {p["pass"]: p["counts"] for p in doc["optimize"]["passes"]}.get("fuse_elementwise", {})
    return counts.get("elementwise ops fused", 0)


def inputs(seed=0, size=5000):
    """Random values and the special ones, in a length that leaves a partial block and a partial lane group."""
    x = np.random.default_rng(seed).normal(0, 3, size).astype(np.float32)
    x[:SPECIAL.size] = SPECIAL
    return x.reshape(-1, 50)


def gelu_graph(tmp_path, fetch_inner=False):
    """Keras 3's tanh GELU of x + 1 as TensorFlow freezes it: the chain reads AddV2's output three times."""
    g = Graph()
    g.placeholder("x", np.float32)
    for name, value in (("one", 1.0), ("half", 0.5), ("three", 3.0), ("coeff", 0.044715), ("scale", 0.7978845608)):
        g.const(name, np.array(value, np.float32))
    g.op("h", "AddV2", ["x", "one"], np.float32)
    g.op("mul", "Mul", ["half", "h"], np.float32)
    g.op("pow", "Pow", ["h", "three"], np.float32)
    g.op("mul_1", "Mul", ["coeff", "pow"], np.float32)
    g.op("add", "AddV2", ["h", "mul_1"], np.float32)
    g.op("mul_2", "Mul", ["scale", "add"], np.float32)
    g.op("tanh", "Tanh", ["mul_2"], np.float32)
    g.op("add_1", "AddV2", ["one", "tanh"], np.float32)
    g.op("gelu", "Mul", ["mul", "add_1"], np.float32)
    if fetch_inner:
        g.op("other", "Neg", ["tanh"], np.float32)  # a reader outside the chain: tanh must stay a value
    return g.save(tmp_path / "model.pb")


def test_a_tanh_gelu_runs_as_one_node_with_the_unfused_answer(runner, tmp_path):
    model = gelu_graph(tmp_path)
    assert fused_count(runner, model, tmp_path, "gelu") == 9
    x = inputs()
    (fused,) = run(runner, model, tmp_path, "gelu", x=x)
    (plain,) = run(runner, model, tmp_path, "gelu", x=x, optimize=False)
    assert_same(fused, plain)
    h = x.astype(np.float64) + 1
    with np.errstate(all="ignore"):
        expected = 0.5 * h * (1 + np.tanh(0.7978845608 * (h + 0.044715 * h ** 3)))
    finite = np.isfinite(expected) & (np.abs(h) < 1e6)
    assert np.allclose(fused[finite], expected[finite], rtol=1e-5, atol=1e-6)


def test_a_value_read_outside_the_chain_is_not_swallowed(runner, tmp_path):
    model = gelu_graph(tmp_path, fetch_inner=True)
    # tanh has a reader outside: the chain ending at gelu stops there, and one ends at tanh
    assert 0 < fused_count(runner, model, tmp_path, "gelu", "other") < 10
    x = inputs(1)
    fused = run(runner, model, tmp_path, "gelu", "other", x=x)
    plain = run(runner, model, tmp_path, "gelu", "other", x=x, optimize=False)
    for a, b in zip(fused, plain):
        assert_same(a, b)


def test_a_fetched_intermediate_keeps_its_value(runner, tmp_path):
    model = gelu_graph(tmp_path)
    x = inputs(2)
    fused = run(runner, model, tmp_path, "gelu", "mul_2", x=x)
    plain = run(runner, model, tmp_path, "gelu", "mul_2", x=x, optimize=False)
    for a, b in zip(fused, plain):
        assert_same(a, b)


@pytest.mark.slow
@pytest.mark.parametrize("op,second", [
    ("Add", "c"), ("Sub", "c"), ("Mul", "c"), ("RealDiv", "c"), ("Maximum", "c"), ("Minimum", "c"),
    ("Pow", "two"), ("Pow", "c"), ("Sub", "x"), ("RealDiv", "x"),
    ("Neg", None), ("Square", None), ("Tanh", None), ("Relu", None), ("Sigmoid", None), ("Exp", None),
    ("Sqrt", None), ("Rsqrt", None),
])
def test_every_step_gives_its_kernels_bits(runner, tmp_path, op, second):
    # Neg(x) then the op (on the chain's value and a scalar, or x itself), then Abs-free Square: a chain of 3
    g = Graph()
    g.placeholder("x", np.float32)
    g.const("c", np.array(-1.75, np.float32))
    g.const("two", np.array(2.0, np.float32))
    g.op("n", "Neg", ["x"], np.float32)
    g.op("y", op, ["n"] + ([second] if second else []), np.float32)
    g.op("z", "Mul", ["y", "c"], np.float32)
    model = g.save(tmp_path / "model.pb")
    assert fused_count(runner, model, tmp_path, "z") == 3
    x = inputs(3)
    with np.errstate(all="ignore"):
        (fused,) = run(runner, model, tmp_path, "z", x=x)
        (plain,) = run(runner, model, tmp_path, "z", x=x, optimize=False)
    assert_same(fused, plain)


def test_two_tensors_or_integers_do_not_fuse(runner, tmp_path):
    g = Graph()
    g.placeholder("x", np.float32)
    g.placeholder("w", np.float32)
    g.op("a", "Mul", ["x", "w"], np.float32)  # two tensors
    g.op("b", "Neg", ["a"], np.float32)
    g.op("c", "Mul", ["b", "w"], np.float32)  # w again, beside the chain's x
    model = g.save(tmp_path / "model.pb")
    np.save(tmp_path / "x.npy", inputs(4))
    np.save(tmp_path / "w.npy", inputs(5))
    doc = json.loads(ok(runner, "bench", model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--feed",
                        f"w=@{tmp_path / 'w.npy'}", "--runs", "1", "--warmup", "0", "--profile", "--json",
                        "--fetch", "c"))
    assert "fuse_elementwise" not in [p["pass"] for p in doc["optimize"]["passes"]]
    h = Graph()
    h.placeholder("x", np.int32)
    h.op("a", "Neg", ["x"], np.int32)
    h.op("b", "Square", ["a"], np.int32)
    np.save(tmp_path / "x.npy", np.arange(10, dtype=np.int32))
    doc = json.loads(ok(runner, "bench", h.save(tmp_path / "ints.pb"), "--feed", f"x=@{tmp_path / 'x.npy'}",
                        "--runs", "1", "--warmup", "0", "--profile", "--json", "--fetch", "b"))
    assert "fuse_elementwise" not in [p["pass"] for p in doc["optimize"]["passes"]]


def test_the_fused_op_is_not_a_model_op(runner, tmp_path):
    g = Graph()
    g.placeholder("x", np.float32)
    g.op("z", "_FusedElementwise", ["x"], np.float32)
    code, _, stderr = run_cc(runner, g.save(tmp_path / "m.pb"))
    assert code == 3 and "_FusedElementwise" in stderr


def test_every_cpu_form_gives_the_unfused_bits(runner, tmp_path):
    # The steps run 16 lanes at a time with AVX-512, 8 with AVX2 and 4 with SSE; the special values
    # include 6.9814636e12, whose cube overflows and is then pow's.
    model = gelu_graph(tmp_path)
    x = inputs(4, size=5000 + 50 * 3)
    np.save(tmp_path / "x.npy", x)
    (plain,) = run(runner, model, tmp_path, "gelu", x=x, optimize=False)
    for env in ({"GRAPHRUN_CC_NO_AVX2": None, "GRAPHRUN_CC_NO_AVX512": None},
                {"GRAPHRUN_CC_NO_AVX2": None, "GRAPHRUN_CC_NO_AVX512": "1"},
                {"GRAPHRUN_CC_NO_AVX2": "1", "GRAPHRUN_CC_NO_AVX512": None}):
        code, stdout, stderr = run_cc(runner, model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--json", "--fetch", "gelu",
                                      env=env)
        assert code == 0, stderr
        (doc,) = json.loads(stdout)["outputs"]
        assert_same(np.array(doc["values"], dtype=doc["dtype"]).reshape(doc["shape"]), plain)
