"""The optimizer at load (graphdef.optimize.at_load): on by default for a model file run by
tf.load's Session and graphrun, off with load(optimize=False), GRAPHDEF_OPTIMIZE=0 or
--no-optimize, and the answers still TensorFlow's (the committed real models, made and
answered by TensorFlow, tests/real_models/generate.py) within each case's tolerance.

Also the Session's in-place steps: a kernel given its dead input's array as out= must never
overwrite a value something else still reads (a view, a feed, a fetch, a constant).
"""

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest

import graphdef as tf
from graphdef.client.session import optimization_report
from graphdef.graphrun import cli
from tests.conformance import replay

REAL_MODELS = Path(__file__).resolve().parents[1] / "real_models"
# Keras' unfused batch norm (Mul/Add/Rsqrt/Sub after each convolution), TF1's FusedBatchNorm
# (V1) after a convolution, and a pre-activation ResNet (batch norms not after a convolution)
MODELS = ["mobilenet_v2", "tf1_fused_batchnorm_v1", "resnet_v2_small"]


def run_case(case, optimize=None):
    graph = tf.load(str(case.model), optimize=optimize)
    feeds = {f"{name}:0": value for name, value in case.feeds.items()}
    with tf.Session(graph=graph) as sess:
        values = sess.run(case.fetches, feeds)
        report = optimization_report(sess, case.fetches, feeds)
    return [np.asarray(v) for v in values], report


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_loaded_models_run_optimized_and_agree_with_tensorflow(name):
    case = replay.load(REAL_MODELS / name)
    values, report = run_case(case)
    assert report is not None and report.nodes_after < report.nodes_before
    replay.check_outputs("optimized Session", case, values)


@pytest.mark.slow
def test_batch_norms_fold_into_the_convolutions():
    """Both forms: Keras' Mul/Add (with Rsqrt/Sub folded to constants first) and FusedBatchNorm."""
    for name, gone in (("mobilenet_v2", {"Mul", "Rsqrt", "Sub"}), ("tf1_fused_batchnorm_v1", {"FusedBatchNorm"})):
        case = replay.load(REAL_MODELS / name)
        graph = tf.load(str(case.model))
        assert gone & {op.type for op in graph.get_operations()}  # in the file
        feeds = {f"{n}:0": v for n, v in case.feeds.items()}
        with tf.Session(graph=graph, engine="python") as sess:  # the numpy plan's ops are the subject
            report = optimization_report(sess, case.fetches, feeds)
            plan = sess._plan(case.fetches, feeds)
        assert report.changes["batch-norm folding"] > 0
        assert not gone & {op.type for op in plan.ops}, name  # not in what runs


@pytest.mark.parametrize("switch", ["argument", "environment"])
def test_the_switch_turns_it_off(switch, monkeypatch):
    case = replay.load(REAL_MODELS / "mobilenet_v2")
    if switch == "environment":
        monkeypatch.setenv("GRAPHDEF_OPTIMIZE", "0")
        values, report = run_case(case)
    else:
        values, report = run_case(case, optimize=False)
    assert report is None
    replay.check_outputs("unoptimized Session", case, values)


@pytest.mark.slow
def test_any_node_can_still_be_fetched_and_fed(tmp_path):
    """The graph keeps every node of the file: a node the passes fold away for the default
    output is still there to fetch, and feeding one in the middle is honoured."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
        scale = tf.identity(tf.constant(2.0) * tf.constant(3.0), name="scale")
        h = tf.matmul(x, w, name="h")
        tf.identity(h * scale, name="y")
    path = tmp_path / "model.pb"
    path.write_bytes(g.as_graph_def().SerializeToString())
    graph = tf.load(str(path))
    xv = np.array([[1, 2, 3]], np.float32)
    with tf.Session(graph=graph) as sess:
        assert optimization_report(sess, "y:0", {"x:0": xv}) is not None
        np.testing.assert_array_equal(sess.run("y:0", {"x:0": xv}), xv @ np.arange(6).reshape(3, 2) * 6)
        assert sess.run("scale:0") == np.float32(6)
        np.testing.assert_array_equal(sess.run("y:0", {"h:0": np.ones((1, 2), np.float32)}), np.full((1, 2), 6))
        np.testing.assert_array_equal(sess.run("y:0", {"x:0": xv, "scale:0": np.float32(1)}),
                                      xv @ np.arange(6).reshape(3, 2))


def test_a_graph_added_to_after_loading_runs_as_it_is(tmp_path):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        tf.identity(x * tf.identity(tf.constant(2.0)), name="y")
    path = tmp_path / "model.pb"
    path.write_bytes(g.as_graph_def().SerializeToString())
    graph = tf.load(str(path))
    with graph.as_default():
        z = tf.add(graph.get_tensor_by_name("y:0"), 1.0, name="z")
    with tf.Session(graph=graph) as sess:
        assert optimization_report(sess, z, {"x:0": np.ones(2, np.float32)}) is None
        np.testing.assert_array_equal(sess.run(z, {"x:0": np.ones(2, np.float32)}), [3, 3])


def test_graphs_with_variables_are_not_optimized(tmp_path):
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.float32(1.5), name="v")
        tf.identity(v * tf.identity(tf.constant(2.0)), name="y")
        tf.global_variables_initializer()
    path = tmp_path / "model.pb"
    path.write_bytes(g.as_graph_def().SerializeToString())
    graph = tf.load(str(path))
    init = [op for op in graph.get_operations() if op.type == "NoOp"][0]
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        assert optimization_report(sess, "y:0") is None
        assert sess.run("y:0") == np.float32(3)


def graphrun(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


@pytest.mark.slow
def test_graphrun_bench_profile_and_inspect_say_what_changed():
    case = replay.load(REAL_MODELS / "mobilenet_v2")
    feed = [arg for name, path in case.feed_files.items() for arg in ("--feed", f"{name}=@{path}")]
    code, out, err = graphrun("bench", case.model, *feed, "--runs", "1", "--warmup", "0", "--profile", "--json")
    assert code == 0, err
    changed = json.loads(out)["profile"]["optimized"]
    assert changed["nodes_after"] < changed["nodes_before"] and changed["passes"]["batch-norm folding"] > 0
    code, out, err = graphrun("bench", case.model, *feed, "--runs", "1", "--warmup", "0", "--profile")
    assert code == 0 and "optimized at load: " in out, err
    # the profiled op types are the optimized graph's: no unfused batch norm left
    assert "Rsqrt" not in out
    code, out, err = graphrun("bench", case.model, *feed, "--runs", "1", "--warmup", "0", "--profile",
                              "--no-optimize")
    assert code == 0 and "optimized at load" not in out and "Rsqrt" in out, err
    code, out, err = graphrun("inspect", case.model, "--json")
    assert code == 0 and json.loads(out)["optimized"] == changed
    code, out, err = graphrun("inspect", case.model, "--no-optimize")
    assert code == 0 and "optimized at load" not in out


def test_graphrun_no_optimize_gives_tensorflows_answer_too():
    case = replay.load(REAL_MODELS / "tf1_fused_batchnorm_v1")
    feed = [arg for name, path in case.feed_files.items() for arg in ("--feed", f"{name}=@{path}")]
    fetch = [arg for f in case.fetches for arg in ("--fetch", f)]
    for extra in ([], ["--no-optimize"]):
        code, out, err = graphrun(case.model, *feed, *fetch, "--json", *extra)
        assert code == 0, err
        outputs = [replay.from_json_output(o)[1] for o in json.loads(out)["outputs"]]
        replay.check_outputs("graphrun " + " ".join(extra), case, outputs)


def test_graphrun_no_optimize_runs_the_graph_as_written_on_the_default_engine(tmp_path):
    """(x @ W) * c + b, which the C++ passes fold into x @ (W * c) + b: with --no-optimize, graphrun's
    answer is float32 arithmetic in the file's order, bit for bit, on the default engine too."""
    x, w, c = np.float32(0.7858014), np.float32(0.5539307), np.float32(0.88336885)
    as_written = np.float32(np.float32(x * w) * c) + np.float32(0)
    folded = np.float32(x * np.float32(np.float64(w) * np.float64(c))) + np.float32(0)
    assert as_written != folded  # the values are chosen so the two orders round apart
    g = tf.Graph()
    with g.as_default():
        xp = tf.placeholder(tf.float32, [1, 1], name="x")
        tf.add(tf.multiply(tf.matmul(xp, tf.constant([[w]])), tf.constant([c])), tf.constant([0.0]), name="y")
    tf.save(g, tmp_path / "fold.pb")
    np.save(tmp_path / "x.npy", np.array([[x]], np.float32))
    code, out, err = graphrun(tmp_path / "fold.pb", "--feed", f"x=@{tmp_path / 'x.npy'}", "--json", "--no-optimize")
    assert code == 0, err
    assert np.float32(json.loads(out)["outputs"][0]["values"][0][0]) == as_written


# -- in-place steps --------------------------------------------------------------------------------

def test_in_place_steps_never_overwrite_a_value_still_read():
    """Relu, Relu6 and BiasAdd may write into their input when nothing reads it afterwards; a
    view of it (Reshape), a fetch, a feed or a constant must keep its value."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        b = tf.constant(np.array([1.0, -2.0, 3.0], np.float32))
        doubled = x * 2.0
        view = tf.reshape(doubled, [3, 2])          # shares doubled's memory
        relu = tf.nn.relu(doubled)                  # doubled is dead after this step but viewed
        biased = tf.nn.bias_add(relu, b)            # relu dead after this: may be overwritten
        clipped = tf.nn.relu6(biased)
        on_feed = tf.nn.relu(x)                     # x is fed: never overwritten
        on_const = tf.nn.bias_add(tf.constant(np.full((2, 3), -1.0, np.float32)), b)
    xv = np.array([[-1.0, 0.5, 4.0], [2.0, -3.0, 0.25]], np.float32)
    kept = xv.copy()
    with tf.Session(graph=g) as sess:
        for _ in range(2):  # the second run reuses the plan: constants must be as the first saw them
            got = sess.run([view, relu, clipped, on_feed, on_const], {x: xv})
            d = kept * 2
            np.testing.assert_array_equal(got[0], d.reshape(3, 2))
            np.testing.assert_array_equal(got[1], np.maximum(d, 0))
            np.testing.assert_array_equal(got[2], np.minimum(np.maximum(np.maximum(d, 0) + [1, -2, 3], 0), 6))
            np.testing.assert_array_equal(got[3], np.maximum(kept, 0))
            np.testing.assert_array_equal(got[4], np.full((2, 3), -1.0) + [1, -2, 3])
            np.testing.assert_array_equal(xv, kept)


def test_add_in_place_only_where_the_sum_fits_its_first_input():
    """AddV2 may write into its first input when nothing reads it afterwards and the sum has its
    shape and dtype; a broadcast to a larger shape, a viewed value or a fed one gets a new array."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        row = tf.placeholder(tf.float32, [1, 3], name="row")
        doubled = x * 2.0
        summed = doubled + x                         # doubled dead after this: may be overwritten
        widened = (row * 3.0) + x                    # [1, 3] + [2, 3]: the sum does not fit row * 3
        tripled = x * 3.0
        view = tf.reshape(tripled, [3, 2])           # shares tripled's memory
        viewed = tripled + 1.0
        on_feed = x + row                            # x is fed: never overwritten
    xv = np.array([[-1.0, 0.5, 4.0], [2.0, -3.0, 0.25]], np.float32)
    rv = np.array([[10.0, -20.0, 0.5]], np.float32)
    kept, kept_row = xv.copy(), rv.copy()
    with tf.Session(graph=g) as sess:
        for _ in range(2):
            got = sess.run([summed, widened, view, viewed, on_feed], {x: xv, row: rv})
            np.testing.assert_array_equal(got[0], kept * 2 + kept)
            np.testing.assert_array_equal(got[1], kept_row * 3 + kept)
            np.testing.assert_array_equal(got[2], (kept * 3).reshape(3, 2))
            np.testing.assert_array_equal(got[3], kept * 3 + 1)
            np.testing.assert_array_equal(got[4], kept + kept_row)
            np.testing.assert_array_equal(xv, kept)
            np.testing.assert_array_equal(rv, kept_row)


def test_kernels_taking_out_still_take_scalars():
    """Relu6 works its second pass in place on its first's result: a 0-d input gives a scalar there."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        y, z = tf.nn.relu6(x), tf.nn.relu(x)
    with tf.Session(graph=g) as sess:
        for value, six, zero in ((7.5, 6.0, 7.5), (-2.0, 0.0, 0.0), (3.25, 3.25, 3.25)):
            assert sess.run([y, z], {x: np.float32(value)}) == [np.float32(six), np.float32(zero)]


@pytest.mark.slow
def test_a_fed_node_keeps_the_fed_value_where_the_passes_would_merge_or_fold_it(tmp_path):
    """A node fed by the caller is not merged with its identical twin (whose readers must still
    compute), and a fed Const is not folded into a filter as a batch-norm scale."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [1, 2, 2, 1], name="x")
        tf.multiply(x, 2.0, name="a")
        b = tf.multiply(x, 2.0, name="b")
        tf.identity(b + 1.0, name="from_b")
        conv = tf.nn.conv2d(x, tf.constant(np.full((1, 1, 1, 1), 3.0, np.float32)), [1, 1, 1, 1], "VALID")
        tf.identity(conv * tf.constant(np.array([5.0], np.float32), name="scale"), name="scaled")
    path = tmp_path / "model.pb"
    path.write_bytes(g.as_graph_def().SerializeToString())
    xv = np.arange(4, dtype=np.float32).reshape(1, 2, 2, 1)
    graph = tf.load(str(path))
    with tf.Session(graph=graph) as sess:
        feeds = {"x:0": xv, "a:0": np.zeros((1, 2, 2, 1), np.float32)}
        np.testing.assert_array_equal(sess.run(["from_b:0", "a:0"], feeds)[0], xv * 2 + 1)
        feeds = {"x:0": xv, "scale:0": np.array([7.0], np.float32)}
        assert optimization_report(sess, "scaled:0", feeds) is not None
        np.testing.assert_array_equal(sess.run("scaled:0", feeds), xv * 3 * 7)
        np.testing.assert_array_equal(sess.run("scaled:0", {"x:0": xv}), xv * 3 * 5)
