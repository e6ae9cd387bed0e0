"""graphrun-cc's load-time graph passes other than fusion (runner/passes): Identity removal, constant
folding, batch-norm folding, common subexpressions, pruning; `inspect --json` and `bench --profile`
say what each did, `--no-optimize` and GRAPHRUN_CC_OPTIMIZE=0 turn them off.

Each test builds a small graph, checks from the pass counts that the pass fired (or, where it must
not, that it did not), and compares the optimized run with an oracle in float64 numpy written here
and with the same runner without passes, under the numerics policy (batch-norm folding reorders a
convolution's arithmetic, so those values are not bit-exact).
"""

import json

import numpy as np
import pytest

from graphdef._proto import graph_pb2

from tests.support.cc_helpers import Graph, bool_attr, float_attr, ints_attr, ok, run_cc, str_attr, type_attr
from tests.support.numerics_policy import assert_conforms, assert_same

RNG = np.random.default_rng(11)
X = RNG.standard_normal((2, 5, 4, 3)).astype(np.float32)
W = RNG.standard_normal((3, 3, 3, 4)).astype(np.float32)
GAMMA = RNG.uniform(0.5, 1.5, 4).astype(np.float32)
BETA = RNG.standard_normal(4).astype(np.float32)
MEAN = RNG.standard_normal(4).astype(np.float32)
VAR = RNG.uniform(0.2, 2.0, 4).astype(np.float32)
EPS = 1e-3


def conv64(x, w):
    """SAME, stride 1 convolution in float64."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    kh, kw = w.shape[:2]
    padded = np.pad(x, ((0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)))
    out = np.zeros(x.shape[:3] + (w.shape[3],))
    for i in range(x.shape[1]):
        for j in range(x.shape[2]):
            out[:, i, j] = np.einsum("nabc,abco->no", padded[:, i:i + kh, j:j + kw], w)
    return out


def batch_norm64(y):
    return (y - MEAN) / np.sqrt(VAR.astype(np.float64) + np.float64(np.float32(EPS))) * GAMMA + BETA


def passes(runner, model, *extra, env=None):
    """{pass name: counts} from inspect --json, and the whole "optimize" document."""
    code, stdout, stderr = run_cc(runner, "inspect", model, "--json", *extra, env=env)
    assert code == 0, stderr
    report = json.loads(stdout)["optimize"]
    return {p["pass"]: p["counts"] for p in report["passes"]}, report


def run(runner, model, tmp_path, *fetches, optimize=True, x=X):
    np.save(tmp_path / "x.npy", x)
    args = [model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--json"] + [a for f in fetches for a in ("--fetch", f)]
    if not optimize:
        args.append("--no-optimize")
    docs = json.loads(ok(runner, *args))["outputs"]
    return [np.array(d["values"], dtype=d["dtype"]).reshape(d["shape"]) for d in docs]


def profiled_ops(runner, model, tmp_path, optimize=True):
    np.save(tmp_path / "x.npy", X)
    args = ["bench", model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--runs", "2", "--warmup", "0", "--profile",
            "--json"] + ([] if optimize else ["--no-optimize"])
    doc = json.loads(ok(runner, *args))
    return {t["op"] for t in doc["profile"]["op_types"]}, doc["optimize"]


def conv(g, name="conv", x="x", w="w"):
    return g.op(name, "Conv2D", [x, w], np.float32, strides=ints_attr([1, 1, 1, 1]), padding=str_attr("SAME"))


def keras_batch_norm_graph(tmp_path, relu=True):
    """Keras' unfused inference batch norm, as tf.nn.batch_normalization writes it:
    x * (rsqrt(var + eps) * gamma) + (beta - mean * that)."""
    g = Graph()
    g.placeholder("x", np.float32, [-1, 5, 4, 3])
    for name, value in (("w", W), ("gamma", GAMMA), ("beta", BETA), ("mean", MEAN), ("var", VAR)):
        g.const(name, value)
    g.const("eps", np.float32(EPS))
    conv(g)
    g.op("bn/add", "AddV2", ["var", "eps"], np.float32)
    g.op("bn/rsqrt", "Rsqrt", ["bn/add"], np.float32)
    g.op("bn/mul", "Mul", ["bn/rsqrt", "gamma"], np.float32)
    g.op("bn/mul_1", "Mul", ["conv", "bn/mul"], np.float32)
    g.op("bn/mul_2", "Mul", ["mean", "bn/mul"], np.float32)
    g.op("bn/sub", "Sub", ["beta", "bn/mul_2"], np.float32)
    g.op("bn/add_1", "AddV2", ["bn/mul_1", "bn/sub"], np.float32)
    if relu:
        g.op("relu", "Relu", ["bn/add_1"], np.float32)
    return g.save(tmp_path / "keras_bn.pb")


def test_keras_batch_norm_folds_into_the_convolution(runner, tmp_path):
    model = keras_batch_norm_graph(tmp_path)
    counts, report = passes(runner, model)
    assert counts["fold_constants"]["nodes folded"] == 5  # add, rsqrt, mul, mul_2, sub
    assert counts["fold_batch_norms"]["batch-norm steps folded"] == 2  # the Mul, then the Add
    assert report["nodes_after"] < report["nodes_before"]
    ops, _ = profiled_ops(runner, model, tmp_path)
    assert not ops & {"Mul", "AddV2", "Rsqrt", "Sub"}, ops
    assert ops <= {"_FusedConv2D", "Conv2D", "BiasAdd", "Relu"}, ops
    (optimized,) = run(runner, model, tmp_path, "relu")
    (plain,) = run(runner, model, tmp_path, "relu", optimize=False)
    expected = np.maximum(batch_norm64(conv64(X, W)), 0).astype(np.float32)
    assert_conforms(optimized, expected, model, "relu")
    assert_conforms(optimized, plain, model, "relu")


@pytest.mark.parametrize("version", ["FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"])
@pytest.mark.parametrize("producer", ["Conv2D", "DepthwiseConv2dNative"])
def test_fused_batch_norm_folds(runner, tmp_path, version, producer):
    g = Graph()
    g.placeholder("x", np.float32, [-1, 5, 4, 3])
    weights = W if producer == "Conv2D" else W[:, :, :, :1].reshape(3, 3, 3, 1)
    channels = weights.shape[2] * weights.shape[3] if producer != "Conv2D" else weights.shape[3]
    g.const("w", weights)
    params = [v[:channels] for v in (GAMMA, BETA, MEAN, VAR)]
    for name, value in zip(("gamma", "beta", "mean", "var"), params):
        g.const(name, value)
    g.op("conv", producer, ["x", "w"], np.float32, strides=ints_attr([1, 1, 1, 1]), padding=str_attr("SAME"))
    attrs = dict(epsilon=float_attr(EPS), is_training=bool_attr(False))
    if version != "FusedBatchNorm":
        attrs["U"] = type_attr(np.float32)
    g.op("bn", version, ["conv", "gamma", "beta", "mean", "var"], np.float32, **attrs)
    g.op("out", "Relu6", ["bn"], np.float32)
    model = g.save(tmp_path / "fused_bn.pb")
    counts, _ = passes(runner, model)
    assert counts["fold_batch_norms"]["batch-norm steps folded"] == 1
    ops, _ = profiled_ops(runner, model, tmp_path)
    assert version not in ops
    (optimized,) = run(runner, model, tmp_path, "out")
    (plain,) = run(runner, model, tmp_path, "out", optimize=False)
    if producer == "Conv2D":
        y = conv64(X, weights)
    else:
        y = np.concatenate([conv64(X[..., c:c + 1], weights[:, :, c:c + 1, :]) for c in range(3)], axis=-1)
    gamma, beta, mean, var = (p.astype(np.float64) for p in params)
    normalized = (y - mean) / np.sqrt(var + np.float64(np.float32(EPS))) * gamma + beta
    expected = np.clip(normalized, 0, 6).astype(np.float32)
    assert_conforms(optimized, expected, model, "out")
    assert_conforms(optimized, plain, model, "out")


def test_a_dense_layer_with_bias_then_batch_norm_folds_into_the_matmul(runner, tmp_path):
    g = Graph()
    g.placeholder("x", np.float32, [-1, 3])
    w = RNG.standard_normal((3, 4)).astype(np.float32)
    bias = RNG.standard_normal(4).astype(np.float32)
    for name, value in (("w", w), ("b", bias), ("scale", GAMMA), ("shift", BETA)):
        g.const(name, value)
    g.op("mm", "MatMul", ["x", "w"], np.float32, transpose_a=bool_attr(False), transpose_b=bool_attr(False))
    g.op("dense", "BiasAdd", ["mm", "b"], np.float32)
    g.op("scaled", "Mul", ["dense", "scale"], np.float32)
    g.op("out", "Add", ["shift", "scaled"], np.float32)
    model = g.save(tmp_path / "dense_bn.pb")
    counts, _ = passes(runner, model)
    assert counts["fold_batch_norms"]["batch-norm steps folded"] == 2
    x = RNG.standard_normal((5, 3)).astype(np.float32)
    (optimized,) = run(runner, model, tmp_path, "out", x=x)
    (plain,) = run(runner, model, tmp_path, "out", optimize=False, x=x)
    expected = ((x.astype(np.float64) @ w + bias) * GAMMA + BETA).astype(np.float32)
    assert_conforms(optimized, expected, model, "out")
    assert_conforms(optimized, plain, model, "out")


def test_a_batch_norm_whose_convolution_is_fetched_stays(runner, tmp_path):
    model = keras_batch_norm_graph(tmp_path)
    conv_out, relu = run(runner, model, tmp_path, "conv", "relu")
    plain_conv, plain_relu = run(runner, model, tmp_path, "conv", "relu", optimize=False)
    assert_same(conv_out, plain_conv)  # its filter was not scaled: the fetched value ran as written
    assert_conforms(relu, plain_relu, model, "relu")


def test_identities_go_unless_something_could_tell(runner, tmp_path):
    g = Graph()
    g.placeholder("x", np.float32, [-1, 5, 4, 3])
    g.op("id", "Identity", ["x"], np.float32)
    g.op("stop", "StopGradient", ["id"], np.float32)
    g.op("id2", "Identity", ["stop"], np.float32)
    g.op("neg", "Neg", ["id2"], np.float32)
    g.op("fetched", "Identity", ["neg"], np.float32)
    g.op("carrier", "Identity", ["neg", "^id"], np.float32)  # carries a control input: stays
    g.op("out", "Exp", ["carrier"], np.float32)
    g.node("noop", "NoOp")
    model = g.save(tmp_path / "ids.pb")
    code, text, _ = run_cc(runner, "inspect", model)
    assert code == 0
    counts, _ = passes(runner, model)
    assert counts["remove_identities"]["identities removed"] == 3
    fetched, out = run(runner, model, tmp_path, "fetched", "out")
    assert_same(fetched, -X)
    assert_conforms(out, np.exp(-X.astype(np.float64)).astype(np.float32), model, "out")


def test_common_subexpressions_merge(runner, tmp_path):
    g = Graph()
    g.placeholder("x", np.float32, [-1, 5, 4, 3])
    g.op("a", "Exp", ["x"], np.float32)
    g.op("b", "Exp", ["x"], np.float32)
    g.op("a2", "Neg", ["a"], np.float32)
    g.op("b2", "Neg", ["b"], np.float32)
    g.op("out", "Sub", ["a2", "b2"], np.float32)
    model = g.save(tmp_path / "cse.pb")
    counts, _ = passes(runner, model)
    assert counts["eliminate_common_subexpressions"]["duplicates merged"] == 2
    (out,) = run(runner, model, tmp_path, "out")
    assert_same(out, np.zeros_like(X))


def test_constants_merge_only_when_their_bytes_are_equal(runner, tmp_path):
    # The pass keys nodes by each attr's size and hash and confirms a hit byte for byte: equal weights
    # merge, weights that differ only in the sign of one zero (equal as numbers, same size) stay apart.
    a = RNG.standard_normal((64, 96)).astype(np.float32)
    a[3, 5] = 0.0
    signed = a.copy()
    signed[3, 5] = -0.0
    g = Graph()
    g.placeholder("x", np.float32, [-1, 64, 96])
    for name, value in (("c1", a), ("c2", a.copy()), ("c3", signed), ("z1", np.float32(0.0)), ("z2", np.float32(-0.0))):
        g.const(name, value)
        g.op("p" + name, "Mul", ["x", name], np.float32)
    model = g.save(tmp_path / "consts.pb")
    counts, _ = passes(runner, model)
    assert counts["eliminate_common_subexpressions"]["duplicates merged"] == 1  # c2 into c1
    x = -np.abs(RNG.standard_normal((2, 64, 96))).astype(np.float32)
    got = run(runner, model, tmp_path, "pc1", "pc2", "pc3", "pz1", "pz2", x=x)
    for value, expected in zip(got, (x * a, x * a, x * signed, x * np.float32(0.0), x * np.float32(-0.0))):
        assert_same(value, expected)
        assert np.array_equal(np.signbit(value), np.signbit(expected))


def test_folding_leaves_random_ops_and_oversized_values(runner, tmp_path):
    g = Graph()
    g.placeholder("x", np.float32, [-1, 5, 4, 3])
    g.const("shape", np.array([5, 4, 3], np.int32))
    g.node("noise", "RandomUniform", ["shape"], T=type_attr(np.int32), dtype=type_attr(np.float32))
    g.op("noisy", "Add", ["x", "noise"], np.float32)
    # 4096 x 1024 float32 = 16 MiB: over the 10 MiB cap, so the Fill stays and runs.
    g.const("dims", np.array([4096, 1024], np.int32))
    g.const("one", np.float32(1))
    g.node("big", "Fill", ["dims", "one"], T=type_attr(np.float32), index_type=type_attr(np.int32))
    g.const("axes", np.array([0, 1], np.int32))
    g.node("total", "Sum", ["big", "axes"], T=type_attr(np.float32), Tidx=type_attr(np.int32),
           keep_dims=bool_attr(False))
    model = g.save(tmp_path / "stateful.pb")
    counts, _ = passes(runner, model)
    assert "fold_constants" not in counts
    noisy, total = run(runner, model, tmp_path, "noisy", "total")
    assert noisy.shape == X.shape and np.all((noisy - X >= -1e-6) & (noisy - X < 1 + 1e-6))
    assert total == np.float32(4096 * 1024)


def test_folding_computes_what_the_kernels_compute(runner, tmp_path):
    g = Graph()
    g.placeholder("x", np.float32, [-1, 5, 4, 3])
    m = np.array([[1.5, -2.0, 0.25], [0.5, 3.0, -1.0]], np.float32)
    g.const("m", m)
    g.op("sq", "Square", ["m"], np.float32)
    g.op("e", "Exp", ["sq"], np.float32)
    g.node("parts", "Unpack", ["e"], T=type_attr(np.float32), num=graph_pb2.AttrValue(i=2),
           axis=graph_pb2.AttrValue(i=0))
    g.op("scaled", "Mul", ["x", "parts"], np.float32)
    g.op("out", "AddV2", ["scaled", "parts:1"], np.float32)
    model = g.save(tmp_path / "fold.pb")
    counts, _ = passes(runner, model)
    assert counts["fold_constants"] == {"nodes folded": 3, "constants made": 1}
    (out,) = run(runner, model, tmp_path, "out")
    (plain,) = run(runner, model, tmp_path, "out", optimize=False)
    assert_same(out, plain)  # the same kernels computed the same values, at load instead
    e = np.exp(m.astype(np.float64) ** 2)
    assert_conforms(out, (X * e[0] + e[1]).astype(np.float32), model, "out")


@pytest.mark.parametrize("switch", ["flag", "env"])
def test_passes_can_be_turned_off(runner, tmp_path, switch):
    model = keras_batch_norm_graph(tmp_path)
    extra, env = (["--no-optimize"], None) if switch == "flag" else ([], {"GRAPHRUN_CC_OPTIMIZE": "0"})
    code, stdout, _ = run_cc(runner, "inspect", model, *extra, env=env)
    assert code == 0 and stdout.splitlines()[-1] == "optimize: off"
    counts, report = passes(runner, model, *extra, env=env)
    assert counts == {} and report["enabled"] is False
    np.save(tmp_path / "x.npy", X)
    code, stdout, _ = run_cc(runner, "bench", model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--runs", "2",
                             "--profile", *extra, env=env)
    assert code == 0 and "\noptimize: off\n" in stdout
    assert "  Rsqrt " in stdout  # the file's batch-norm arithmetic ran as written


def test_the_text_reports_say_what_changed(runner, tmp_path):
    model = keras_batch_norm_graph(tmp_path)
    code, stdout, _ = run_cc(runner, "inspect", model)
    line = stdout.splitlines()[-1]
    assert line.startswith("optimize: 16 nodes -> ")
    assert "fold_constants: 5 nodes folded" in line and "fold_batch_norms: 2 batch-norm steps folded" in line
    np.save(tmp_path / "x.npy", X)
    stdout = ok(runner, "bench", model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--runs", "2", "--profile")
    assert line in stdout.splitlines()


def test_a_foldable_string_node_leaves_the_rest_folded(runner, tmp_path):
    """Strings are left to the run (their bytes are not their dtype's size), and the pass goes on
    folding the numbers beside them."""
    g = Graph()
    g.placeholder("x", np.float32, [-1, 5, 4, 3])
    g.const("m", np.array([[1.5, -2.0, 0.25], [0.5, 3.0, -1.0]], np.float32))
    g.op("sq", "Square", ["m"], np.float32)
    g.op("out", "Mul", ["x", "sq"], np.float32)
    string = graph_pb2.DataType.DT_STRING
    g.node("words", "Const", dtype=graph_pb2.AttrValue(type=string),
           value=graph_pb2.AttrValue(tensor=graph_pb2.TensorProto(
               dtype=string, string_val=[b"a", b"bc"], tensor_shape=graph_pb2.TensorShapeProto(
                   dim=[graph_pb2.TensorShapeProto.Dim(size=2)]))))
    g.const("to", np.array([2, 1], np.int32))
    g.node("column", "Reshape", ["words", "to"], T=graph_pb2.AttrValue(type=string), Tshape=type_attr(np.int32))
    model = g.save(tmp_path / "strings.pb")
    counts, _ = passes(runner, model)
    assert counts["fold_constants"]["nodes folded"] == 1  # sq, and not the string Reshape
