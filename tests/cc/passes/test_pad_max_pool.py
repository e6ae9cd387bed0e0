"""graphrun-cc's folding of a zero Pad into the MaxPool reading it (runner/passes/fold_pads_into_max_pools.cc):
the pair runs as one _ZeroPadMaxPool node (runner/kernels/max_pool.cc), as after ResNet50's stem.

The Pad's zeros are values the MaxPool compares like any other, and MaxPool starts at the lowest finite
value and keeps a tap only when strictly greater, in row-major order: a window of NaN or -inf beside
padding gives +0.0, and of -0.0 and a padding zero the first seen stays. So every value is compared bit
for bit, on inputs full of NaN, -inf, +inf and both zeros, with an oracle written here (numpy, tap by tap)
and with the same runner without passes. Each test also checks from `inspect --json` whether the pass
fired and from `bench --profile` which op types ran.
"""

import json

import numpy as np
import pytest

from tests.support.cc_helpers import Graph, fails, ints_attr, ok, run_cc, str_attr, type_attr
from tests.support.numerics_policy import assert_conforms, assert_same

RNG = np.random.default_rng(31)
SPECIAL = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, -1.5, 2.25, -3.0, 1e-3], np.float32)


def special_input(shape):
    """Channel 0 all -0.0, 1 all NaN, 2 all -inf, 3 NaN and -0.0, 4 negative, 5 both zeros; the rest
    drawn from SPECIAL, so that whole windows of each meet the padding."""
    x = RNG.choice(SPECIAL, size=shape).astype(np.float32)
    x[..., 0] = -0.0
    x[..., 1] = np.nan
    x[..., 2] = -np.inf
    x[..., 3] = RNG.choice(np.array([np.nan, -0.0], np.float32), size=shape[:3])
    x[..., 4] = -RNG.uniform(0.5, 2.0, size=shape[:3])
    x[..., 5] = RNG.choice(np.array([-0.0, 0.0], np.float32), size=shape[:3])
    return x


# 21 channels: the float32 kernel's register blocks and the channels left over after them, at every width
X = special_input((2, 7, 6, 21))


def window_start(size, k, stride, padding, explicit):
    """(output size, padding before) of one axis, TensorFlow's rule."""
    if padding == "SAME":
        out = -(-size // stride)
        return out, max((out - 1) * stride + k - size, 0) // 2
    before, after = explicit if padding == "EXPLICIT" else (0, 0)
    return (size + before + after - k) // stride + 1, before


def max_pool_oracle(x, pads, k, stride, padding, explicit=(0,) * 8):
    """Pad with zeros, then MaxPool tap by tap in row-major order over the taps inside the padded
    input: start at the lowest finite value, keep a tap only when strictly greater."""
    padded = np.pad(x, pads)
    n, h, w, c = padded.shape
    oh, top = window_start(h, k[0], stride, padding, explicit[2:4])
    ow, left = window_start(w, k[1], stride, padding, explicit[4:6])
    lowest = np.finfo(x.dtype).min if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    out = np.full((n, oh, ow, c), lowest, x.dtype)
    with np.errstate(invalid="ignore"):
        for i in range(oh):
            for j in range(ow):
                for a in range(k[0]):
                    for b in range(k[1]):
                        r, col = i * stride - top + a, j * stride - left + b
                        if 0 <= r < h and 0 <= col < w:
                            tap = padded[:, r, col]
                            out[:, i, j] = np.where(tap > out[:, i, j], tap, out[:, i, j])
    return out


def pad_pool_graph(tmp_path, x, pads, k=(3, 3), stride=2, padding="VALID", explicit=None, pad_op="Pad", value=0.0,
                   before=None, extra_use=False):
    """x (a placeholder) [-> `before` (Relu)] -> pad_op -> MaxPool "pool"."""
    g = Graph()
    g.placeholder("x", x.dtype, list(x.shape))
    source = "x"
    if before:
        source = g.op("relu", before, ["x"], x.dtype)
    g.const("p", np.array(pads, np.int64))
    inputs = [source, "p"]
    if pad_op == "PadV2":
        g.const("v", np.array(value, x.dtype))
        inputs.append("v")
    g.op("pad", pad_op, inputs, x.dtype, Tpaddings=type_attr(np.int64))
    attrs = dict(ksize=ints_attr([1, *k, 1]), strides=ints_attr([1, stride, stride, 1]), padding=str_attr(padding))
    if explicit:
        attrs["explicit_paddings"] = ints_attr(explicit)
    g.op("pool", "MaxPool", ["pad"], x.dtype, **attrs)
    if extra_use:
        g.op("neg", "Neg", ["pad"], x.dtype)
    return g.save(tmp_path / "pad_pool.pb")


def pass_counts(runner, model):
    """{pass name: counts} from inspect --json."""
    code, stdout, stderr = run_cc(runner, "inspect", model, "--json")
    assert code == 0, stderr
    return {p["pass"]: p["counts"] for p in json.loads(stdout)["optimize"]["passes"]}


def values(runner, model, tmp_path, x, fetches, optimize=True, env=None):
    """The fetched values from .npy files (every bit kept)."""
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / ("out" if optimize else "out_plain")
    args = [model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--out", out, *[a for f in fetches for a in ("--fetch", f)]]
    code, _, stderr = run_cc(runner, *args, *([] if optimize else ["--no-optimize"]), env=env)
    assert code == 0 and stderr == "", stderr
    return [np.load(out / f"{f}_0.npy") for f in fetches]


def op_types(runner, model, tmp_path, x, fetches):
    np.save(tmp_path / "x.npy", x)
    args = ["bench", model, "--feed", f"x=@{tmp_path / 'x.npy'}", *[a for f in fetches for a in ("--fetch", f)],
            "--runs", "1", "--warmup", "0", "--profile", "--json"]
    return sorted(t["op"] for t in json.loads(ok(runner, *args))["profile"]["op_types"])


def check_exact(runner, model, tmp_path, x, fetches, expected, env=None):
    """Optimized and unoptimized runs both give `expected` ({fetch: value}) bit for bit."""
    for optimize in (True, False):
        for fetch, got in zip(fetches, values(runner, model, tmp_path, x, fetches, optimize, env)):
            assert_same(got, expected[fetch])


# pads of (H, W), window, stride, the MaxPool's padding and explicit_paddings
FOLDED = {
    "ResNet50's stem": (((1, 1), (1, 1)), (3, 3), 2, "VALID", None),
    "asymmetric, stride 1": (((0, 1), (2, 0)), (3, 3), 1, "VALID", None),
    "SAME on the padded size": (((1, 2), (0, 1)), (2, 3), 2, "SAME", None),
    "SAME, stride 1": (((2, 0), (1, 1)), (3, 3), 1, "SAME", None),
    "EXPLICIT around the Pad's zeros": (((1, 0), (0, 2)), (3, 3), 2, "EXPLICIT", [0, 0, 0, 1, 2, 0, 0, 0]),
    "windows of zeros only": (((0, 3), (3, 0)), (2, 2), 1, "VALID", None),
}


# the float32 kernel's forms for AVX-512, AVX2 and SSE on this CPU, as far as it has them
ISA_CAPS = [None, {"GRAPHRUN_CC_NO_AVX512": "1"}, {"GRAPHRUN_CC_NO_AVX2": "1"}]


@pytest.mark.slow
@pytest.mark.parametrize("case", FOLDED)
@pytest.mark.parametrize("pad_op, env", [("Pad", None), ("PadV2", None), *(("Pad", cap) for cap in ISA_CAPS[1:])])
def test_a_zero_pad_folds_into_the_max_pool_bit_for_bit(runner, tmp_path, case, pad_op, env):
    (rows, cols), k, stride, padding, explicit = FOLDED[case]
    pads = ((0, 0), rows, cols, (0, 0))
    model = pad_pool_graph(tmp_path, X, pads, k, stride, padding, explicit, pad_op=pad_op)
    assert pass_counts(runner, model)["fold_pads_into_max_pools"] == {"pads folded into max pools": 1}
    assert op_types(runner, model, tmp_path, X, ["pool"]) == ["_ZeroPadMaxPool"]
    expected = max_pool_oracle(X, pads, k, stride, padding, explicit or (0,) * 8)
    # where the padding comes first, a window of -0.0 gives +0.0; elsewhere -0.0
    assert {0, 2**31} <= set(expected[..., 0].view(np.uint32).ravel())
    check_exact(runner, model, tmp_path, X, ["pool"], {"pool": expected}, env)


@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.uint16, np.int64])
def test_other_dtypes_fold_too(runner, tmp_path, dtype):
    x = (RNG.integers(-20, 20, size=(2, 7, 6, 5)) if np.dtype(dtype).kind != "u" else
         RNG.integers(0, 40, size=(2, 7, 6, 5))).astype(dtype)
    if x.dtype.kind == "f":
        x[0, :2, :2, 0] = -0.0
        x[1, :, :, 1] = np.nan
    pads = ((0, 0), (1, 2), (2, 1), (0, 0))
    model = pad_pool_graph(tmp_path, x, pads, stride=1)
    assert pass_counts(runner, model)["fold_pads_into_max_pools"] == {"pads folded into max pools": 1}
    check_exact(runner, model, tmp_path, x, ["pool"], {"pool": max_pool_oracle(x, pads, (3, 3), 1, "VALID")})


@pytest.mark.parametrize("shape", [(1, 0, 3, 2), (2, 3, 4, 0), (0, 3, 3, 2)])
def test_empty_inputs_fold_too(runner, tmp_path, shape):
    # no rows: every window holds only the Pad's zeros
    x = np.ones(shape, np.float32)
    pads = ((0, 0), (1, 1), (1, 1), (0, 0))
    model = pad_pool_graph(tmp_path, x, pads, k=(2, 2), stride=1)
    assert pass_counts(runner, model)["fold_pads_into_max_pools"] == {"pads folded into max pools": 1}
    check_exact(runner, model, tmp_path, x, ["pool"], {"pool": max_pool_oracle(x, pads, (2, 2), 1, "VALID")})


@pytest.mark.parametrize("env", ISA_CAPS)
def test_a_large_folded_pool_splits_over_the_cores(runner, tmp_path, env):
    # ResNet50's stem shape at a smaller size, large enough for its pixels to be shared out over the cores,
    # with an odd output width so that a share starts mid-row
    x = special_input((3, 41, 37, 64))
    pads = ((0, 0), (1, 1), (1, 1), (0, 0))
    model = pad_pool_graph(tmp_path, x, pads)
    assert op_types(runner, model, tmp_path, x, ["pool"]) == ["_ZeroPadMaxPool"]
    check_exact(runner, model, tmp_path, x, ["pool"], {"pool": max_pool_oracle(x, pads, (3, 3), 2, "VALID")}, env)


def test_a_pad_after_a_relu_folds(runner, tmp_path):
    # ResNet50's order: Relu -> Pad -> MaxPool. The Relu's own output (-0.0 or +0.0 for -0.0, whatever
    # the kernel gives) is fetched as well, which leaves the Pad free to fold; the pool must be the
    # oracle's of exactly those values.
    pads = ((0, 0), (1, 1), (1, 1), (0, 0))
    model = pad_pool_graph(tmp_path, X, pads, before="Relu")
    assert pass_counts(runner, model)["fold_pads_into_max_pools"] == {"pads folded into max pools": 1}
    assert op_types(runner, model, tmp_path, X, ["pool"]) == ["Relu", "_ZeroPadMaxPool"]
    for optimize in (True, False):
        relu, pool = values(runner, model, tmp_path, X, ["relu", "pool"], optimize)
        assert_same(pool, max_pool_oracle(relu, pads, (3, 3), 2, "VALID"))


def test_resnet50s_stem_folds_after_the_fused_convolution(runner, tmp_path):
    # Conv2D -> BiasAdd -> Relu -> Pad -> MaxPool: the convolution fuses its bias and Relu, the Pad folds.
    x = RNG.standard_normal((2, 12, 10, 3)).astype(np.float32)
    g = Graph()
    g.placeholder("x", np.float32, list(x.shape))
    g.const("w", RNG.standard_normal((3, 3, 3, 8)).astype(np.float32))
    g.const("b", RNG.standard_normal(8).astype(np.float32))
    g.op("conv", "Conv2D", ["x", "w"], np.float32, strides=ints_attr([1, 2, 2, 1]), padding=str_attr("SAME"))
    g.op("bias", "BiasAdd", ["conv", "b"], np.float32)
    g.op("relu", "Relu", ["bias"], np.float32)
    g.const("p", np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32))
    g.op("pad", "Pad", ["relu", "p"], np.float32, Tpaddings=type_attr(np.int32))
    g.op("pool", "MaxPool", ["pad"], np.float32, ksize=ints_attr([1, 3, 3, 1]), strides=ints_attr([1, 2, 2, 1]),
         padding=str_attr("VALID"))
    model = g.save(tmp_path / "stem.pb")
    assert pass_counts(runner, model)["fold_pads_into_max_pools"] == {"pads folded into max pools": 1}
    assert op_types(runner, model, tmp_path, x, ["pool"]) == ["_FusedConv2D", "_ZeroPadMaxPool"]
    (optimized,) = values(runner, model, tmp_path, x, ["pool"])
    (plain,) = values(runner, model, tmp_path, x, ["pool"], optimize=False)
    assert_conforms(optimized, plain, model, "pool")  # the fused convolution adds its bias in oneDNN


NOT_FOLDED = {
    "read twice": dict(extra_use=True),
    "non-zero constant": dict(pad_op="PadV2", value=1.5),
    "negative zero constant": dict(pad_op="PadV2", value=-0.0),
    "batch padded": dict(pads=((1, 0), (1, 1), (1, 1), (0, 0))),
    "channels padded": dict(pads=((0, 0), (1, 1), (1, 1), (0, 2))),
}


@pytest.mark.parametrize("case", NOT_FOLDED)
def test_a_pad_that_cannot_fold_stays(runner, tmp_path, case):
    options = dict(NOT_FOLDED[case])
    pads = options.pop("pads", ((0, 0), (1, 1), (1, 1), (0, 0)))
    model = pad_pool_graph(tmp_path, X, pads, **options)
    fetches = ["pool"] + (["neg"] if options.get("extra_use") else [])
    assert "fold_pads_into_max_pools" not in pass_counts(runner, model)
    assert options.get("pad_op", "Pad") in op_types(runner, model, tmp_path, X, fetches)
    padded = np.pad(X, pads, constant_values=np.float32(options.get("value", 0.0)))
    expected = {"pool": max_pool_oracle(padded, ((0, 0),) * 4, (3, 3), 2, "VALID"), "neg": -padded}
    check_exact(runner, model, tmp_path, X, fetches, expected)


def test_a_fetched_pad_stays(runner, tmp_path):
    pads = ((0, 0), (1, 1), (1, 1), (0, 0))
    model = pad_pool_graph(tmp_path, X, pads)
    assert op_types(runner, model, tmp_path, X, ["pad", "pool"]) == ["MaxPool", "Pad"]
    expected = {"pad": np.pad(X, pads), "pool": max_pool_oracle(X, pads, (3, 3), 2, "VALID")}
    check_exact(runner, model, tmp_path, X, ["pad", "pool"], expected)


@pytest.mark.parametrize("top, folded", [(2**31, False), (2**31 - 1, True)])
def test_giant_pads_are_refused_as_the_pad_refuses_them(runner, tmp_path, top, folded):
    # Past int32 the Pad stays; up to it the Pad folds, and the folded node still refuses the padded
    # tensor the Pad could not have made, though its own output (a stride of 2**30) would be small.
    x = np.ones((1, 4, 4, 2), np.float32)
    model = pad_pool_graph(tmp_path, x, ((0, 0), (top, 0), (0, 0), (0, 0)), k=(1, 1), stride=2**30)
    assert ("fold_pads_into_max_pools" in pass_counts(runner, model)) == folded
    np.save(tmp_path / "x.npy", x)
    for extra in ([], ["--no-optimize"]):
        code, stdout, stderr = run_cc(runner, model, "--feed", f"x=@{tmp_path / 'x.npy'}", *extra,
                                      env={"GRAPHDEF_MAX_TENSOR_BYTES": str(2**30)})
        assert code == 4 and stdout == "" and stderr.count("\n") == 1 and stderr.startswith("graphrun-cc: "), stderr
        assert f"[1,{4 + top},4,2] float32 would take" in stderr and "internal error" not in stderr, stderr
        assert ("node 'pool' (_ZeroPadMaxPool): the zero Pad folded into this node" in stderr) == (folded and not extra)


def test_a_model_file_cannot_name_the_folded_op(runner, tmp_path):
    g = Graph()
    g.const("x", np.ones((1, 4, 4, 1), np.float32))
    g.op("pool", "_ZeroPadMaxPool", ["x"], np.float32, ksize=ints_attr([1, 2, 2, 1]),
         strides=ints_attr([1, 1, 1, 1]), padding=str_attr("VALID"), zero_paddings=ints_attr([0, 0, 1, 1, 1, 1, 0, 0]))
    model = g.save(tmp_path / "model.pb")
    assert "no kernel for _ZeroPadMaxPool" in fails(runner, 3, model)
