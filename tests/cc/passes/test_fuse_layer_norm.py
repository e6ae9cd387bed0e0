"""graphrun-cc's fuse_layer_norm pass: a frozen Keras (or tf.nn.batch_normalization) layer norm over the last
axis runs as one _FusedLayerNorm node, only where nothing outside the pattern can see an intermediate value.

The fused node's sums are numpy's pairwise ones, where the Mean kernel adds left to right, so against the
unfused run it agrees within Mean's tolerance, and against the Python runtime bit for bit. Graphs are built
with the generated protobuf classes as TensorFlow freezes them (StopGradient and all); one test freezes a
real tf.keras model.
"""

import json

import numpy as np
import pytest

import graphdef
from tests.support.cc_helpers import Graph, bool_attr, fails, ok, type_attr
from tests.support.numerics_policy import assert_conforms, assert_same
from tests.support.op_oracle import freeze_keras, tf_oracle  # noqa: F401 (tf_oracle: a fixture)

EXIT_MODEL = 3


def layer_norm_graph(tmp_path, form="keras", width=64, eps=1e-3, gamma_shape=None, outside=None, seed=0):
    """x [?, ?, width] normalized over its last axis with Const gamma and beta, as Keras 3 ("keras":
    shift = -mean * inv + beta) or tf.nn.batch_normalization ("tf": shift = beta - mean * inv) writes it.
    `outside` names a node of the pattern that a Neg outside it also reads."""
    rng = np.random.default_rng(seed)
    shape = gamma_shape or (1, 1, width)
    g = Graph()
    g.placeholder("x", np.float32)
    g.const("axes", np.array([-1], np.int32))
    g.const("eps", np.float32(eps))
    g.const("gamma", rng.uniform(0.5, 1.5, shape).astype(np.float32))
    g.const("beta", rng.uniform(-0.5, 0.5, shape).astype(np.float32))
    mean_attrs = dict(keep_dims=bool_attr(True), Tidx=type_attr(np.int32))
    g.op("mean", "Mean", ["x", "axes"], np.float32, **mean_attrs)
    g.op("stop", "StopGradient", ["mean"], np.float32)
    g.op("sqdiff", "SquaredDifference", ["x", "stop"], np.float32)
    g.op("variance", "Mean", ["sqdiff", "axes"], np.float32, **mean_attrs)
    g.op("add", "AddV2", ["variance", "eps"], np.float32)
    g.op("rsqrt", "Rsqrt", ["add"], np.float32)
    g.op("inv", "Mul", ["rsqrt", "gamma"], np.float32)
    g.op("xs", "Mul", ["x", "inv"], np.float32)
    if form == "keras":
        g.op("neg", "Neg", ["mean"], np.float32)
        g.op("ms", "Mul", ["neg", "inv"], np.float32)
        g.op("shift", "AddV2", ["ms", "beta"], np.float32)
    else:
        g.op("ms", "Mul", ["mean", "inv"], np.float32)
        g.op("shift", "Sub", ["beta", "ms"], np.float32)
    g.op("out", "AddV2", ["xs", "shift"], np.float32)
    if outside:
        g.op("other", "Neg", [outside], np.float32)
    return g.save(tmp_path / "model.pb")


def consts(model):
    """{name: value} of the model's gamma, beta and eps."""
    graph = graphdef.load(str(model), optimize=False)
    with graphdef.Session(graph=graph) as sess:
        return dict(zip(["gamma", "beta", "eps"], sess.run(["gamma:0", "beta:0", "eps:0"])))


def inputs(seed=0, shape=(3, 5, 64)):
    return np.random.default_rng(seed).normal(0.3, 2.0, shape).astype(np.float32)


def run(runner, model, tmp_path, x, *fetches, optimize=True):
    np.save(tmp_path / "x.npy", x)
    args = [model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--json"] + [a for f in fetches for a in ("--fetch", f)]
    docs = json.loads(ok(runner, *args, *([] if optimize else ["--no-optimize"])))["outputs"]
    return [np.array(d["values"], dtype=d["dtype"]).reshape(d["shape"]) for d in docs]


def pass_counts(runner, model, tmp_path, x, *fetches):
    """What fuse_layer_norm reported ({} when it changed nothing), from bench --profile --json."""
    np.save(tmp_path / "x.npy", x)
    doc = json.loads(ok(runner, "bench", model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--runs", "1", "--warmup",
                        "0", "--profile", "--json", *[a for f in fetches for a in ("--fetch", f)]))
    ops = {t["op"] for t in doc["profile"]["op_types"]}
    counts = {p["pass"]: p["counts"] for p in doc["optimize"]["passes"]}.get("fuse_layer_norm", {})
    assert ("_FusedLayerNorm" in ops) == bool(counts)
    return counts


def python_runtime(model, x, fetch="out"):
    with graphdef.Session(graph=graphdef.load(str(model))) as sess:
        return sess.run(f"{fetch}:0", {"x:0": x})


def float64_layer_norm(x, gamma, beta, eps):
    x = x.astype(np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + np.float64(eps)) * gamma.astype(np.float64) + beta.astype(np.float64)


@pytest.mark.parametrize("form", ["keras", "tf"])
@pytest.mark.parametrize("width", [5, 64, 300])  # a plain sum, one pairwise block, blocks split in halves
def test_a_layer_norm_runs_as_one_node(runner, tmp_path, form, width):
    model = layer_norm_graph(tmp_path, form, width)
    x = inputs(width, (3, 5, width))
    x[0, 0] += 8.0  # a row whose mean is away from zero
    assert pass_counts(runner, model, tmp_path, x, "out") == {"layer norms fused": 1,
                                                              "ops fused": 11 if form == "keras" else 10}
    (fused,) = run(runner, model, tmp_path, x, "out")
    (plain,) = run(runner, model, tmp_path, x, "out", optimize=False)
    assert_conforms(fused, plain, model, "out")
    assert_same(fused, python_runtime(model, x))
    c = consts(model)
    expected = float64_layer_norm(x, c["gamma"], c["beta"], c["eps"]).astype(np.float32)
    assert_conforms(fused, expected, model, "out")


def test_constant_and_nonfinite_rows(runner, tmp_path):
    model = layer_norm_graph(tmp_path, width=8)
    x = inputs(1, (6, 8))  # the output is [1, 6, 8]: gamma is 3-D
    x[0] = 2.5            # variance 0: rsqrt(eps) alone
    x[1] = 0.0
    x[2, 3] = np.nan      # a NaN or an infinity spoils its own row only
    x[3, 5] = np.inf
    x[4, :] = -np.inf
    x[5, 0] = 3e38        # a square that overflows: variance inf, rsqrt 0, the row x * 0 + (beta - mean * 0)
    with np.errstate(all="ignore"):
        (fused,) = run(runner, model, tmp_path, x, "out")
        (plain,) = run(runner, model, tmp_path, x, "out", optimize=False)
        python = python_runtime(model, x)
    assert_conforms(fused, plain, model, "out")
    assert_same(fused, python)
    # x * inv + (beta - mean * inv) with x == mean rounds twice, so beta comes back exactly only from zeros
    beta = consts(model)["beta"].reshape(-1)
    assert_same(fused[0, 1], beta)
    assert_same(fused[0, 5], beta)
    assert np.all(np.isnan(fused[0, 2:5])) and np.all(np.isfinite(fused[0, [0, 1, 5]]))


@pytest.mark.parametrize("outside", ["mean", "sqdiff", "variance", "rsqrt", "inv", "xs", "shift", "neg"])
def test_an_intermediate_read_outside_keeps_the_graph(runner, tmp_path, outside):
    model = layer_norm_graph(tmp_path, outside=outside)
    x = inputs(2)
    assert pass_counts(runner, model, tmp_path, x, "out", "other") == {}
    fused = run(runner, model, tmp_path, x, "out", "other")
    plain = run(runner, model, tmp_path, x, "out", "other", optimize=False)
    for a, b in zip(fused, plain):
        assert_same(a, b)


def test_a_fetched_intermediate_keeps_the_graph(runner, tmp_path):
    model = layer_norm_graph(tmp_path)
    x = inputs(3)
    assert pass_counts(runner, model, tmp_path, x, "out", "variance") == {}
    assert pass_counts(runner, model, tmp_path, x, "out") != {}


def test_inspect_says_the_pass_ran(runner, tmp_path):
    model = layer_norm_graph(tmp_path)
    last = ok(runner, "inspect", model).splitlines()[-1]
    assert last.startswith("optimize:") and "fuse_layer_norm: 1 layer norms fused, 11 ops fused" in last, last


@pytest.mark.parametrize("width, gamma_shape", [(1, (4,)), (6, (1,)), (6, (1, 1, 1, 6))])
def test_shapes_broadcast_as_the_unfused_ops_did(runner, tmp_path, width, gamma_shape):
    # x's shape is unknown to the pass, so a last dim of 1, a gamma of 1 or a gamma of higher rank
    # is broadcast at run time, as the Muls and Adds it replaces would have
    model = layer_norm_graph(tmp_path, width=width, gamma_shape=gamma_shape)
    x = inputs(4, (2, 3, width))
    assert pass_counts(runner, model, tmp_path, x, "out") != {}
    (fused,) = run(runner, model, tmp_path, x, "out")
    (plain,) = run(runner, model, tmp_path, x, "out", optimize=False)
    assert fused.shape == plain.shape
    assert_conforms(fused, plain, model, "out")


def test_a_mean_over_another_axis_does_not_fuse(runner, tmp_path):
    model = layer_norm_graph(tmp_path)
    graph = Graph()
    graph.proto.ParseFromString(model.read_bytes())
    axes = next(n for n in graph.proto.node if n.name == "axes")
    axes.attr["value"].tensor.tensor_content = np.array([1], np.int32).tobytes()
    model = graph.save(tmp_path / "axis1.pb")
    x = inputs(5, (3, 64, 64))
    assert pass_counts(runner, model, tmp_path, x, "out") == {}


def test_the_fused_op_is_not_a_model_op(runner, tmp_path):
    g = Graph()
    g.placeholder("x", np.float32)
    g.const("c", np.ones(4, np.float32))
    g.node("z", "_FusedLayerNorm", ["x", "c", "c"], T=type_attr(np.float32))
    line = fails(runner, EXIT_MODEL, g.save(tmp_path / "m.pb"), "--feed", "x=[1,2,3,4]")
    assert "_FusedLayerNorm" in line


@pytest.mark.slow
@pytest.mark.tf_oracle
@pytest.mark.parametrize("library", ["keras", "tf_keras"])
def test_a_frozen_keras_layer_normalization(runner, tf_oracle, tmp_path, library):
    keras = pytest.importorskip(library, reason=f"{library} is not installed; `make test` installs it")
    inputs_ = keras.Input((16, 48))
    # tf_keras runs its own fused batch norm unless epsilon is below 1.001e-5: then it is tf.nn's form
    norm = keras.layers.LayerNormalization(epsilon=1e-6 if library == "tf_keras" else 1e-3)
    model = keras.Model(inputs_, norm(inputs_))
    rng = np.random.default_rng(6)
    norm.set_weights([rng.uniform(0.5, 1.5, 48).astype(np.float32), rng.uniform(-0.5, 0.5, 48).astype(np.float32)])
    path = tmp_path / "model.pb"
    x_name, fetch, graph_def = freeze_keras(tf_oracle, model, (None, 16, 48), path)
    x = inputs(7, (4, 16, 48))
    np.save(tmp_path / "x.npy", x)
    doc = json.loads(ok(runner, "bench", path, "--feed", f"{x_name}=@{tmp_path / 'x.npy'}", "--runs", "1",
                        "--warmup", "0", "--profile", "--json", "--fetch", fetch))
    counts = {p["pass"]: p["counts"] for p in doc["optimize"]["passes"]}
    assert counts.get("fuse_layer_norm", {}).get("layer norms fused") == 1, counts
    got = json.loads(ok(runner, path, "--feed", f"{x_name}=@{tmp_path / 'x.npy'}", "--fetch", fetch,
                        "--json"))["outputs"][0]
    got = np.array(got["values"], dtype=got["dtype"]).reshape(got["shape"])
    # the Keras model's own call, not the frozen function's: with TF_ENABLE_ONEDNN_OPTS=1 (the no-AVX2 profile,
    # or TF imported by another test first) grappler gives the frozen graph's tf_keras layer norm to oneDNN's
    # layer norm kernel, whose answer was some 7e-4 away from float64's where this graph's ops agree to 6e-7
    expected = np.asarray(model(x))
    assert_conforms(got, expected, graph_def, fetch)
