"""graphdef.optimize and `graphrun optimize`: the optimized graph computes what the original does.

Oracles: every conformance case and every TensorFlow-made model (tests/tf_models/), whose
expected outputs were computed in float64 or by TensorFlow, judged under the same per-fetch
tolerances as the original graph; TensorFlow itself runs the optimized TF-made models; and
numpy written here for the batch-norm folding rewrite.
"""


import numpy as np
import pytest

import graphdef as tf
from graphdef.client.session import Session
from graphdef.framework.graph import Graph
from graphdef.optimize import optimize
from graphdef.ops.registry import build
from graphdef.wire.serialize import import_graph_def, read_graph_def
from tests.support.cc_helpers import outputs as cc_outputs
from tests.conformance import replay
from tests.support.graphrun_helpers import fails, graphrun
from tests.tf.test_tf_models import MODEL_DIRS
from tests.support.tf_capabilities import why_tensorflow_cannot_run

CONFORMANCE = replay.case_dirs()


def run_session(graph_def, case):
    graph = Graph()
    with graph.as_default():
        import_graph_def(graph_def, name="")
    with Session(graph=graph) as session:
        return session.run(case.fetches, {f"{k}:0": v for k, v in case.feeds.items()})


def optimized(case):
    graph_def = read_graph_def(case.model)
    outputs = sorted({f.split(":")[0] for f in case.fetches})
    return optimize(graph_def, outputs=outputs, keep=list(case.feeds))


@pytest.mark.slow
@pytest.mark.parametrize("directory", CONFORMANCE, ids=[d.name for d in CONFORMANCE])
def test_conformance_cases_unchanged_by_optimization(directory):
    case = replay.load(directory)
    if "python" in case.skip:
        pytest.skip(case.skip["python"])
    graph_def, _ = optimized(case)
    replay.check_outputs("optimized Session", case, run_session(graph_def, case))


@pytest.mark.slow
@pytest.mark.parametrize("directory", MODEL_DIRS, ids=[d.name for d in MODEL_DIRS])
def test_tf_models_optimized_run_everywhere(directory, tmp_path, cc_runner):
    case = replay.load(directory)
    graph_def, report = optimized(case)
    if not graph_def.library.function:  # a graph with functions is only pruned (graphdef/optimize/__init__.py)
        assert report.nodes_after < report.nodes_before, report.lines()
    replay.check_outputs("optimized Session", case, run_session(graph_def, case))
    path = tmp_path / "optimized.pb"
    path.write_bytes(graph_def.SerializeToString())
    outputs = cc_outputs(cc_runner, path, *replay.cli_args(case, json_output=False)[1:])
    replay.check_outputs("optimized graphrun-cc", case, outputs)


@pytest.mark.slow
@pytest.mark.tf_oracle
@pytest.mark.parametrize("directory", MODEL_DIRS, ids=[d.name for d in MODEL_DIRS])
def test_tensorflow_runs_optimized_tf_models(directory):
    tensorflow = pytest.importorskip("tensorflow")
    tf1 = tensorflow.compat.v1
    case = replay.load(directory)
    graph_def, _ = optimized(case)
    why = why_tensorflow_cannot_run(tensorflow, graph_def)
    if why:
        pytest.skip(f"{case.name}: {why}")
    graph = tf1.Graph()
    with graph.as_default():
        tf1.import_graph_def(tf1.GraphDef.FromString(graph_def.SerializeToString()), name="")
    with tf1.Session(graph=graph) as session:
        outputs = session.run(case.fetches, {f"{k}:0": v for k, v in case.feeds.items()})
    replay.check_outputs("TensorFlow on the optimized graph", case, outputs)


# -- the rewrites themselves, against numpy -------------------------------------------------------

RNG = np.random.default_rng(7)
X = RNG.standard_normal((2, 6, 6, 3)).astype(np.float32)
W = RNG.standard_normal((3, 3, 3, 4)).astype(np.float32)
GAMMA, BETA = RNG.uniform(0.5, 2, 4).astype(np.float32), RNG.standard_normal(4).astype(np.float32)
MEAN, VAR = RNG.standard_normal(4).astype(np.float32), RNG.uniform(0.5, 2, 4).astype(np.float32)


def conv_f64(x, w):
    """VALID, stride 1 convolution in float64: the oracle for folded and unfolded graphs alike."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    kh, kw = w.shape[:2]
    out = np.zeros((x.shape[0], x.shape[1] - kh + 1, x.shape[2] - kw + 1, w.shape[3]))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nhwc,cd->nhwd", x[:, i:i + out.shape[1], j:j + out.shape[2]], w[i, j])
    return out


def batch_norm_f64(y, epsilon):
    return (y - MEAN) * GAMMA / np.sqrt(VAR.astype(np.float64) + np.float32(epsilon)) + BETA


def build_and_optimize(build):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, X.shape, name="x")
        out = tf.identity(build(tf.nn.conv2d(x, tf.constant(W), [1, 1, 1, 1], "VALID")), name="out")
    graph_def, report = optimize(graph.as_graph_def(), outputs=["out"], keep=["x"])
    folded = Graph()
    with folded.as_default():
        import_graph_def(graph_def, name="")
    with Session(graph=folded) as session:
        value = session.run("out:0", {"x:0": X})
    return graph_def, report, value, out


@pytest.mark.slow
def test_fused_batch_norm_folds_into_the_filter():
    graph_def, report, value, out = build_and_optimize(lambda y: tf.nn.fused_batch_norm(
        y, tf.constant(GAMMA), tf.constant(BETA), tf.constant(MEAN), tf.constant(VAR), epsilon=0.001,
        is_training=False)[0])
    assert report.changes["batch-norm folding"] == 1
    # the folded BiasAdd then fuses with the convolution (fusion's own tests: test_fusion.py)
    assert sorted(n.op for n in graph_def.node if n.op != "Const") == ["Identity", "Placeholder", "_FusedConv2D"]
    expected = batch_norm_f64(conv_f64(X, W), 0.001)
    np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


@pytest.mark.slow
def test_unfused_batch_norm_folds_after_constant_folding():
    """Keras' and TF1's unfused form: Rsqrt, Mul, Sub and Add on constants fold to x * c + b first."""
    def unfused(y):
        inv = tf.math.rsqrt(tf.constant(VAR) + 0.001) * tf.constant(GAMMA)
        return y * inv + (tf.constant(BETA) - tf.constant(MEAN) * inv)
    graph_def, report, value, _ = build_and_optimize(unfused)
    assert report.changes["batch-norm folding"] >= 1 and report.changes["constant folding"] >= 1
    assert not {"Mul", "Rsqrt", "AddV2", "Sub"} & {n.op for n in graph_def.node}
    expected = batch_norm_f64(conv_f64(X, W), 0.001)
    np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


@pytest.mark.slow
def test_batch_norm_after_a_biased_convolution_folds():
    """Keras' Conv2D with use_bias (ResNet50): Conv2D -> BiasAdd(b) -> Mul/Add of the batch norm."""
    bias = RNG.standard_normal(4).astype(np.float32)

    def biased_then_unfused(y):
        inv = tf.math.rsqrt(tf.constant(VAR) + 0.001) * tf.constant(GAMMA)
        return tf.nn.bias_add(y, tf.constant(bias)) * inv + (tf.constant(BETA) - tf.constant(MEAN) * inv)
    graph_def, report, value, _ = build_and_optimize(biased_then_unfused)
    assert report.changes["batch-norm folding"] >= 2
    # the folded BiasAdd then fuses with the convolution (fusion's own tests: test_fusion.py)
    assert sorted(n.op for n in graph_def.node if n.op != "Const") == ["Identity", "Placeholder", "_FusedConv2D"]
    expected = batch_norm_f64(conv_f64(X, W) + bias, 0.001)
    np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


def test_a_batch_norm_whose_input_is_also_fetched_stays():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, X.shape, name="x")
        conv = tf.nn.conv2d(x, tf.constant(W), [1, 1, 1, 1], "VALID", name="conv")
        tf.identity(conv * tf.constant(GAMMA), name="out")
    graph_def, report = optimize(graph.as_graph_def(), outputs=["out", "conv"], keep=["x"])
    assert not report.changes.get("batch-norm folding")
    assert "Mul" in {n.op for n in graph_def.node}


@pytest.mark.slow
def test_constant_folding_keeps_large_values_and_fed_nodes_computed():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        big = tf.fill([4096, 1024], 1.0, name="big")          # 16 MiB, read by a computed node: stays
        summed = tf.reduce_sum(tf.fill([4096, 1024], 2.0))    # 16 MiB inside, one float out: folds
        fed = tf.constant(5.0, name="fed")
        tf.identity(tf.reduce_sum(big * x) + summed + fed * 2.0, name="out")
    graph_def, report = optimize(graph.as_graph_def(), outputs=["out"], keep=["x", "fed"])
    ops = {n.name: n.op for n in graph_def.node}
    assert ops["big"] == "Fill" and ops["fed"] == "Const", ops
    assert list(ops.values()).count("Fill") == 1 and report.changes["constant folding"] >= 1
    folded = Graph()
    with folded.as_default():
        import_graph_def(graph_def, name="")
    with Session(graph=folded) as session:
        n = 4096 * 1024
        assert session.run("out:0", {"x:0": 1.0}) == n + 2 * n + 10.0
        assert session.run("out:0", {"x:0": 0.5, "fed:0": 1.0}) == n / 2 + 2 * n + 2.0


@pytest.mark.slow
def test_common_subexpressions_merge_but_random_ops_do_not():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [3], name="x")
        a, b = tf.exp(x), tf.exp(x)
        shape = tf.constant([3])
        r1, r2 = (build("RandomUniform", [shape], attrs={"dtype": tf.float32, "seed": 1, "seed2": 2}).outputs[0]
                  for _ in range(2))
        tf.identity(a + b, name="out")
        tf.identity(r1 - r2, name="noise")
    graph_def, _ = optimize(graph.as_graph_def(), outputs=["out", "noise"], keep=["x"])
    ops = [n.op for n in graph_def.node]
    assert ops.count("Exp") == 1 and ops.count("RandomUniform") == 2


# -- the verb -------------------------------------------------------------------------------------

@pytest.mark.slow
def test_graphrun_optimize_writes_a_graph_graphrun_runs(capsys, tmp_path):
    model = MODEL_DIRS[0] / "model.pb"
    out = tmp_path / "opt.pb"
    code, stdout, err = graphrun(capsys, "optimize", model, "-o", out)
    assert code == 0 and stdout == "" and err.startswith("graphrun optimize: "), err
    assert "nodes ->" in err
    assert len(read_graph_def(out).node) < len(read_graph_def(model).node)


def test_graphrun_optimize_names_an_unknown_output(capsys, tmp_path):
    fails(capsys, 2, "optimize", MODEL_DIRS[0] / "model.pb", "-o", tmp_path / "o.pb", "--outputs", "nope",
          mentions=["--outputs nope", "no node"])


@pytest.mark.slow
def test_control_inputs_on_constants_are_dropped_and_the_constants_pruned():
    """TF2's frozen graphs: the output waits on a NoOp that waits on every weight's Const; those
    edges order nothing, and keeping them would keep each original weight next to its folded copy."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        weight = tf.constant(np.arange(300, dtype=np.float32), name="weight")
        with tf.control_dependencies([weight]):
            done = tf.no_op(name="done")
        with tf.control_dependencies([done]):
            tf.identity(x * 2.0, name="out")
    graph_def, _ = optimize(graph.as_graph_def(), outputs=["out"], keep=["x"])
    assert {n.name for n in graph_def.node} & {"weight", "done"} == set()
    folded = Graph()
    with folded.as_default():
        import_graph_def(graph_def, name="")
    with Session(graph=folded) as session:
        np.testing.assert_array_equal(session.run("out:0", {"x:0": np.array([1, -2], np.float32)}), [2, -4])


@pytest.mark.slow
def test_common_subexpressions_merge_large_constants_only_when_equal():
    """Large Consts are keyed by a digest of their bytes; equal ones merge, different ones stay."""
    big = np.arange(1000, dtype=np.float32)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [1000], name="x")
        a, b, c = tf.constant(big, name="a"), tf.constant(big, name="b"), tf.constant(big + 1, name="c")
        tf.identity(x * a + x * b + c, name="out")
    graph_def, _ = optimize(graph.as_graph_def(), outputs=["out"], keep=["x"])
    consts = [n.name for n in graph_def.node if n.op == "Const"]
    assert len(consts) == 2 and "c" in consts
