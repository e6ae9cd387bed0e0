"""graphrun-cc's kernels on a Transformer's path, against numpy oracles worked out in the test: Tanh and
Exp (computed in float32 lanes without libm), Pow's small integer exponents (GELU's cube), Transpose, Einsum's operand
layouts, BatchMatMulV2 of a sequence by one matrix, and Softmax's rows split over the cores.

Inputs are fed as .npy files, so the load-time constant folding cannot compute them first.
"""

import json

import numpy as np
import pytest

from graphdef._proto import graph_pb2
from tests.support.cc_helpers import Graph, bool_attr, fed_graph, from_json_output, output, outputs, run_cc, type_attr
from tests.support.numerics_policy import assert_conforms, assert_same


def fed(tmp_path, **arrays):
    args = []
    for name, value in arrays.items():
        path = tmp_path / f"{name}.npy"
        np.save(path, value)
        args += ["--feed", f"{name}=@{path}"]
    return args


def ulps_apart(actual, expected64):
    """How many float32 steps `actual` is from float64 `expected64` rounded to float32."""
    nearest = expected64.astype(np.float32)

    def ordered(v):
        return np.where(v.view(np.int32) < 0, np.int32(-2**31) - v.view(np.int32), v.view(np.int32))
    return np.abs(ordered(actual).astype(np.int64) - ordered(nearest).astype(np.int64))


SPECIALS32 = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754942e-38, 2.0**-13, -(2.0**-13),
                       np.nextafter(np.float32(2.0**-13), np.float32(0)), 10.0, -10.0, np.nextafter(np.float32(10), 0),
                       0.5, 0.34657359, 0.34657362, 3.4e38, -3.4e38, 0.625, -0.625,
                       np.nextafter(np.float32(0.625), np.float32(0))], np.float32)
# exp's edges: the largest finite result and the first overflow, results going denormal and to 0
EXP_SPECIALS32 = np.array([88.72283935546875, np.nextafter(np.float32(88.72283935546875), np.float32(100)), 88.7, -87.3,
                           -87.4, -100.0, -103.2789, -103.9720840, -103.9720841, -104.0, -104.1, -150.0, 1e-8, -1e-8,
                           0.34657359, -0.34657359], np.float32)


def sweep():
    """Every 65521st float32 bit pattern, both signs, denormals to NaNs, and SPECIALS32."""
    return np.concatenate([np.arange(0, 2**32, 65521, dtype=np.uint64).astype(np.uint32).view(np.float32), SPECIALS32])


@pytest.mark.parametrize("op, reference, steps", [("Tanh", np.tanh, 2), ("Exp", np.exp, 1)])
def test_float32_lanes_are_within_their_steps_on_a_sweep_of_every_magnitude(runner, tmp_path, op, reference, steps):
    # the kernels' error bounds, measured over every third bit pattern: 2 float steps from the
    # correctly rounded tanh, 1 from exp; the ops' numerics allow 4 ulps
    x = np.concatenate([sweep(), EXP_SPECIALS32]) if op == "Exp" else sweep()
    model = fed_graph(tmp_path, op, [np.float32])
    y = output(runner, model, *fed(tmp_path, a=x))
    with np.errstate(invalid="ignore", over="ignore"):  # NaN patterns and exp's overflow in the sweep
        expected = reference(x.astype(np.float64))
    nan = np.isnan(x)
    assert np.array_equal(np.isnan(y), nan)
    assert np.array_equal(np.signbit(y[~nan]), np.signbit(expected[~nan]))  # -0.0 stays -0.0
    with np.errstate(over="ignore"):  # exp's reference beyond float32's range rounds to inf
        assert ulps_apart(y[~nan], expected[~nan]).max() <= steps
        assert_conforms(y, expected.astype(np.float32), model, "z:0")


def test_tanh_splits_a_large_tensor_over_the_cores_alike(runner, tmp_path):
    # 300001 elements: parallel shares and a tail group that is not full
    x = np.random.default_rng(3).normal(0, 3, 300001).astype(np.float32)
    y = output(runner, fed_graph(tmp_path, "Tanh", [np.float32]), *fed(tmp_path, a=x))
    assert ulps_apart(y, np.tanh(x.astype(np.float64))).max() <= 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("exponent", [2.0, 3.0])
def test_pow_by_two_or_three_multiplies(runner, tmp_path, dtype, exponent):
    info = np.finfo(dtype)
    x = np.concatenate([np.array([0.0, -0.0, np.inf, -np.inf, np.nan, info.tiny, -info.tiny, info.smallest_subnormal,
                                  1e-20, -1e-20, 1e13, -1e13, 1e30, -1.5, 2.0, 6.9814636e12, -6.9814636e12], dtype),
                        np.random.default_rng(5).normal(0, 4, 1000).astype(dtype)])
    model = fed_graph(tmp_path, "Pow", [dtype, dtype])
    y = output(runner, model, *fed(tmp_path, a=x, b=np.array(exponent, dtype)))
    # the multiplications the kernel promises, in its order; and pow itself within Pow's ulps
    with np.errstate(over="ignore", under="ignore"):
        square = x * x
        product = square * x if exponent == 3 else square
        # where the products overflow a finite x, pow's own answer (float32's +-6.9814636e12 cubes to the
        # largest finite value, though (x * x) * x overflows)
        overflow = np.isinf(product) & np.isfinite(x)
        assert_same(y[~overflow], product[~overflow])
        assert_same(y[overflow], np.power(x[overflow], dtype(exponent)))
        reference = np.power(x.astype(np.float64), exponent).astype(dtype)
    assert_conforms(y, reference, model, "z:0")


def test_pow_by_another_exponent_still_calls_pow(runner, tmp_path):
    x = np.array([-0.0, -np.inf, 4.0, 2.0], np.float32)
    model = fed_graph(tmp_path, "Pow", [np.float32, np.float32])
    y = output(runner, model, *fed(tmp_path, a=x, b=np.array(0.5, np.float32)))
    assert_same(y, np.array([0.0, np.inf, 2.0, np.sqrt(np.float32(2))], np.float32))  # pow's, not sqrt's, zero and inf


@pytest.mark.parametrize("shape,perm", [
    ((2, 5, 3, 4), (0, 2, 1, 3)),    # an attention head split: runs of 4
    ((2, 3, 4), (2, 1, 0)),          # innermost dim moves: strided gather
    ((1, 6, 1, 7), (3, 1, 0, 2)),    # dims of one move nothing
    ((3, 4, 5), (0, 1, 2)),          # the identity, shared
    ((4, 1, 3, 2, 5), (1, 3, 4, 0, 2)),
    ((0, 3), (1, 0)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.int16])
def test_transpose_matches_numpy(runner, tmp_path, shape, perm, dtype):
    x = (np.arange(np.prod(shape)) % 120 - 60).astype(dtype).reshape(shape)
    g = Graph()
    g.placeholder("a", dtype)
    g.const("perm", np.array(perm, np.int32))
    g.op("z", "Transpose", ["a", "perm"], dtype, Tperm=type_attr(np.int32))
    y = output(runner, g.save(tmp_path / "model.pb"), *fed(tmp_path, a=x))
    assert_same(y, np.transpose(x, perm))


@pytest.mark.slow
def test_transpose_of_a_large_tensor_splits_over_the_cores(runner, tmp_path):
    x = np.random.default_rng(1).normal(size=(8, 128, 8, 64)).astype(np.float32)
    g = Graph()
    g.placeholder("a", np.float32)
    g.const("perm", np.array([0, 2, 1, 3], np.int32))
    g.op("z", "Transpose", ["a", "perm"], np.float32, Tperm=type_attr(np.int32))
    assert_same(output(runner, g.save(tmp_path / "model.pb"), *fed(tmp_path, a=x)), x.transpose(0, 2, 1, 3))


@pytest.mark.parametrize("equation,shapes", [
    ("BTNH,BSNH->BNTS", [(2, 5, 3, 4), (2, 6, 3, 4)]),   # attention scores: both operands keep H innermost
    ("BNTS,BSNH->BTNH", [(2, 3, 5, 6), (2, 6, 3, 4)]),   # attention values
    ("bij,bkj->bik", [(3, 4, 5), (3, 6, 5)]),            # right operand stored transposed
    ("bji,bjk->bik", [(3, 5, 4), (3, 5, 6)]),            # left operand stored transposed
    ("ij,jk->ki", [(4, 5), (5, 6)]),                     # the product itself transposed
    ("abc,cde->abde", [(2, 3, 4), (4, 2, 5)]),           # a Keras EinsumDense projection
    ("BTNH,BSNH->BNTS", [(1, 1, 3, 4), (1, 6, 3, 4)]),   # dims of one
])
def test_einsum_operand_layouts_match_numpy(runner, tmp_path, equation, shapes):
    rng = np.random.default_rng(11)
    a, b = (rng.normal(size=s).astype(np.float32) for s in shapes)
    g = Graph()
    g.placeholder("a", np.float32)
    g.placeholder("b", np.float32)
    g.op("z", "Einsum", ["a", "b"], np.float32, equation=graph_pb2.AttrValue(s=equation.encode()),
         N=graph_pb2.AttrValue(i=2))
    model = g.save(tmp_path / "model.pb")
    y = output(runner, model, *fed(tmp_path, a=a, b=b))
    assert_conforms(y, np.einsum(equation, a.astype(np.float64), b.astype(np.float64)).astype(np.float32), model,
                    "z:0")


@pytest.mark.parametrize("adj_y", [False, True])
def test_batch_matmul_of_a_sequence_by_one_matrix(runner, tmp_path, adj_y):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 3, 4, 5)).astype(np.float32)
    w = rng.normal(size=(6, 5) if adj_y else (5, 6)).astype(np.float32)
    model = fed_graph(tmp_path, "BatchMatMulV2", [np.float32, np.float32], adj_x=bool_attr(False),
                      adj_y=bool_attr(adj_y))
    y = output(runner, model, *fed(tmp_path, a=x, b=w))
    expected = x.astype(np.float64) @ (w.T if adj_y else w).astype(np.float64)
    assert y.shape == (2, 3, 4, 6)
    assert_conforms(y, expected.astype(np.float32), model, "z:0")


def test_softmax_rows_split_over_the_cores(runner, tmp_path):
    x = np.random.default_rng(4).normal(0, 5, (700, 128)).astype(np.float32)
    x[3, 7] = np.inf
    x[5] = -np.inf
    model = fed_graph(tmp_path, "Softmax", [np.float32])
    y = output(runner, model, *fed(tmp_path, a=x))
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(x64 - x64.max(axis=1, keepdims=True))
        expected = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    assert_conforms(y, expected, model, "z:0")


@pytest.mark.parametrize("op", ["Reshape", "Transpose"])
def test_a_shared_input_is_never_overwritten_through_its_view(runner, tmp_path, op):
    # Reshape, and a Transpose by [0, 1, 2] (Keras' Tensordot), hand on Neg's buffer; Relu and Square
    # may overwrite a dead input in place, which must not reach the buffer Neg's other reader (Abs)
    # still sees.
    x = np.random.default_rng(6).normal(size=(2, 3, 4)).astype(np.float32)
    g = Graph()
    g.placeholder("a", np.float32)
    g.op("n", "Neg", ["a"], np.float32)
    if op == "Reshape":
        g.const("shape", np.array([2, 12], np.int32))
        g.op("v", "Reshape", ["n", "shape"], np.float32, Tshape=type_attr(np.int32))
        view = (-x).reshape(2, 12)
    else:
        g.const("perm", np.array([0, 1, 2], np.int32))
        g.op("v", "Transpose", ["n", "perm"], np.float32, Tperm=type_attr(np.int32))
        view = -x
    g.op("z", "Relu", ["v"], np.float32)
    g.op("s", "Square", ["z"], np.float32)
    g.op("k", "Abs", ["n"], np.float32)
    model = g.save(tmp_path / "model.pb")
    values = outputs(runner, model, *fed(tmp_path, a=x), "--fetch", "s", "--fetch", "k", "--fetch", "v")
    assert_same(values["s:0"], np.square(np.maximum(view, 0)))
    assert_same(values["k:0"], np.abs(x))
    assert_same(values["v:0"], view)


@pytest.mark.parametrize("op", ["Tanh", "Exp"])
def test_every_cpu_form_gives_the_same_bits(runner, tmp_path, op):
    # The AVX-512 form (16 lanes), the AVX2 form (8) and the SSE form (4) compute the same operations
    # on each lane, without FMA.
    x = np.concatenate([np.arange(0, 2**32, 1000003, dtype=np.uint64).astype(np.uint32).view(np.float32), SPECIALS32,
                        EXP_SPECIALS32, np.random.default_rng(8).normal(0, 3, 1001).astype(np.float32)])
    model = fed_graph(tmp_path, op, [np.float32])
    args = [model, *fed(tmp_path, a=x), "--json"]
    answers = []
    for env in ({"GRAPHRUN_CC_NO_AVX2": None, "GRAPHRUN_CC_NO_AVX512": None},
                {"GRAPHRUN_CC_NO_AVX2": None, "GRAPHRUN_CC_NO_AVX512": "1"},
                {"GRAPHRUN_CC_NO_AVX2": "1", "GRAPHRUN_CC_NO_AVX512": None}):
        code, stdout, stderr = run_cc(runner, *args, env=env)
        assert code == 0, stderr
        answers.append(from_json_output(json.loads(stdout)["outputs"][0])[1])
    assert_same(answers[0], answers[1])
    assert_same(answers[0], answers[2])
