"""graphrun_c.h's session (graphrun_session_*) through graphdef/_native/capi.py's CcSession.

TF1 graphs built with graphdef's API run in the C++ core with their variables kept between runs: an
initializer, then training steps, each step's loss and variables against the same model computed in
float64 by numpy here; extend() grows the graph and keeps the variables; read/assign round trips;
check() names the ops without a kernel as graphrun-cc does; hostile bytes, unknown names and wrong
dtypes give a GraphrunError of one line, never a crash.
"""

import ctypes
import subprocess
import sys
import threading

import numpy as np
import pytest
from google.protobuf import text_format

import graphdef as tf
from graphdef._native import capi
from graphdef._proto import graph_pb2
from tests.support import serve_helpers

REPO = serve_helpers.ROOT
RATE = 0.05


@pytest.fixture(scope="module")
def lib():
    serve_helpers.ensure_library()
    return capi.load_library()


def refused(call):
    with pytest.raises(capi.GraphrunError) as caught:
        call()
    message = str(caught.value)
    assert message and "\n" not in message
    return caught.value.code, message


def regression(hidden=None):
    """A linear model (or one hidden ReLU layer), mean squared error, plain gradient descent."""
    graph = tf.Graph()
    rng = np.random.default_rng(3)
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        if hidden:
            w1 = tf.Variable(rng.normal(0, 0.5, (3, hidden)).astype(np.float32), name="w1")
            b1 = tf.Variable(np.full([hidden], 0.1, np.float32), name="b1")
            x = tf.nn.relu(tf.matmul(x, w1) + b1, name="h")
        w = tf.Variable(rng.normal(0, 0.5, (hidden or 3, 1)).astype(np.float32), name="w")
        b = tf.Variable(np.zeros([1], np.float32), name="b")
        pred = tf.add(tf.matmul(x, w), b, name="pred")
        loss = tf.reduce_mean(tf.square(pred - y), name="loss")
        tf.train.GradientDescentOptimizer(RATE).minimize(loss, name="train")
        tf.global_variables_initializer()  # named "init"
    return graph


def numpy_step(params, x, y):
    """The loss before the step and the parameters after it, in float64."""
    p = {k: v.astype(np.float64) for k, v in params.items()}
    x, y = x.astype(np.float64), y.astype(np.float64)
    h = np.maximum(x @ p["w1"] + p["b1"], 0) if "w1" in p else x
    error = h @ p["w"] + p["b"] - y
    loss = np.mean(error ** 2)
    d_pred = 2 * error / error.size
    grads = {"w": h.T @ d_pred, "b": d_pred.sum(axis=0)}
    if "w1" in p:
        d_h = (d_pred @ p["w"].T) * (h > 0)
        grads.update(w1=x.T @ d_h, b1=d_h.sum(axis=0))
    return loss, {k: p[k] - RATE * grads[k] for k in p}


def batch(rng, n=8):
    x = rng.normal(size=(n, 3)).astype(np.float32)
    return x, (x @ np.float32([[1.5], [-2.0], [0.5]]) + 0.25).astype(np.float32)


@pytest.mark.parametrize("hidden", [None, 4])
@pytest.mark.parametrize("optimize", [True, False])
def test_training_steps_match_a_float64_computation(lib, hidden, optimize):
    graph = regression(hidden)
    session = capi.CcSession(graph.as_graph_def().SerializeToString(), optimize=optimize)
    names = ["w", "b"] + (["w1", "b1"] if hidden else [])
    assert all(session.read_variable(n) is None for n in names)
    assert session.run({}, [], ["init"]) == []
    initial = {op.name: op.get_attr("value") for op in graph.get_operations() if op.name.endswith("/initial_value")}
    params = {n: session.read_variable(n) for n in names}
    for n in names:
        np.testing.assert_array_equal(params[n], initial[f"{n}/initial_value"])
    rng = np.random.default_rng(0)
    for step in range(12):
        x, y = batch(rng)
        (loss,) = session.run({"x": x, "y:0": y}, ["loss:0"], ["train"])
        expected_loss, expected = numpy_step(params, x, y)
        np.testing.assert_allclose(loss, expected_loss, rtol=2e-5, err_msg=f"step {step}")
        params = {n: session.read_variable(n) for n in names}
        for n in names:
            np.testing.assert_allclose(params[n], expected[n], rtol=2e-5, atol=1e-6, err_msg=f"{n} after step {step}")
            assert params[n].dtype == np.float32
    # fetching the variables gives what read_variable gives
    fetched = session.run({}, names, [])
    for n, value in zip(names, fetched):
        np.testing.assert_array_equal(value, params[n])
    session.close()


def test_a_run_without_init_names_the_uninitialized_variable(lib):
    session = capi.CcSession(regression().as_graph_def().SerializeToString())
    x, y = batch(np.random.default_rng(1))
    code, message = refused(lambda: session.run({"x": x, "y": y}, ["loss"], ["train"]))
    assert code == capi.RUN and "not initialized" in message and ("'w'" in message or "'b'" in message)


def test_feeding_a_computed_tensor_replaces_it(lib):
    session = capi.CcSession(regression().as_graph_def().SerializeToString())
    session.run({}, [], ["init"])
    pred = np.float32([[1.0], [2.0], [4.0]])
    y = np.float32([[0.0], [0.0], [1.0]])
    (loss,) = session.run({"pred": pred, "y": y}, ["loss"], [])  # x is not needed once pred is fed
    np.testing.assert_allclose(loss, np.mean((pred.astype(np.float64) - y) ** 2), rtol=1e-6)


def test_feeds_are_not_kept_after_the_run(lib):
    graph = tf.Graph()
    with graph.as_default():
        value = tf.placeholder(tf.float32, [2, 2], name="value")
        v = tf.Variable(np.zeros((2, 2), np.float32), name="v")
        tf.assign(v, value, name="set")
        tf.identity(value, name="echo")
    session = capi.CcSession(graph.as_graph_def().SerializeToString())
    fed = np.float32([[1, 2], [3, 4]])
    (echo,) = session.run({"value": fed}, ["echo"], ["set"])
    fed[:] = -7  # the caller takes its memory back
    np.testing.assert_array_equal(echo, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(session.read_variable("v"), [[1, 2], [3, 4]])


def test_values_in_the_other_byte_order_are_read_as_numbers(lib):
    """A '>f4' array is named "float32" like a native one: the binding must hand over native bytes."""
    graph = tf.Graph()
    with graph.as_default():
        value = tf.placeholder(tf.float32, [2], name="value")
        tf.Variable(np.zeros(2, np.float32), name="v")
        tf.multiply(value, 2.0, name="twice")
    session = capi.CcSession(graph.as_graph_def().SerializeToString())
    swapped = np.array([1.5, -3.25], dtype=np.dtype(np.float32).newbyteorder())
    (twice,) = session.run({"value": swapped}, ["twice"], [])
    np.testing.assert_array_equal(twice, np.float64([1.5, -3.25]) * 2)
    session.assign_variable("v", swapped)
    np.testing.assert_array_equal(session.read_variable("v"), np.float64([1.5, -3.25]))
    model_feeds = capi._Feeds({"value": swapped})
    assert ctypes.string_at(model_feeds.data[0], 8) == np.float32([1.5, -3.25]).tobytes()


def test_read_and_assign_round_trip(lib):
    session = capi.CcSession(regression().as_graph_def().SerializeToString())
    session.assign_variable("w", np.float32([[1], [2], [3]]))
    session.assign_variable("b", np.float32([0.5]))
    np.testing.assert_array_equal(session.read_variable("w"), [[1], [2], [3]])
    # an assigned value is what the graph computes with
    x = np.float32([[1, 1, 1], [0, 1, 0]])
    (pred,) = session.run({"x": x}, ["pred"], [])
    np.testing.assert_array_equal(pred, x @ np.float32([[1], [2], [3]]) + 0.5)
    # a strided (non-contiguous) value is copied in C order
    session.assign_variable("w", np.arange(6, dtype=np.float32).reshape(3, 2)[:, :1])
    np.testing.assert_array_equal(session.read_variable("w"), [[0], [2], [4]])
    code, message = refused(lambda: session.assign_variable("w", np.zeros((3, 1))))
    assert code == capi.USAGE and "float64" in message and "float32" in message and "'w'" in message
    code, message = refused(lambda: session.assign_variable("nope", np.zeros(1, np.float32)))
    assert code == capi.USAGE and "unknown variable 'nope'" in message and "w" in message
    code, message = refused(lambda: session.read_variable("loss"))
    assert code == capi.USAGE and "not a VariableV2" in message


def added_nodes(old, new):
    """The GraphDef of what `new` has beyond `old` (what a TF1 client sends as it grows)."""
    names = {n.name for n in old.node}
    extension = graph_pb2.GraphDef()
    extension.versions.CopyFrom(new.versions)
    extension.node.extend(n for n in new.node if n.name not in names)
    return extension


@pytest.mark.parametrize("send", ["whole graph", "added nodes"])
def test_extend_keeps_variables_and_runs_the_new_nodes(lib, send):
    graph = regression()
    before = graph.as_graph_def()
    session = capi.CcSession(before.SerializeToString())
    session.run({}, [], ["init"])
    session.assign_variable("w", np.float32([[1], [2], [3]]))
    with graph.as_default():
        w = graph.get_tensor_by_name("w:0")
        tf.multiply(w, 2.0, name="doubled")
        tf.Variable(np.float32([7, 8]), name="fresh")
    after = graph.as_graph_def()
    session.extend((after if send == "whole graph" else added_nodes(before, after)).SerializeToString())
    np.testing.assert_array_equal(session.read_variable("w"), [[1], [2], [3]])
    assert session.read_variable("fresh") is None  # a new variable has no value until its initializer runs
    (doubled,) = session.run({}, ["doubled"], [])
    np.testing.assert_array_equal(doubled, [[2], [4], [6]])
    session.run({}, [], ["fresh/Assign"])
    np.testing.assert_array_equal(session.read_variable("fresh"), [7, 8])


def test_extend_replaces_nodes_by_name_and_survives_a_bad_extension(lib):
    graph = regression()
    session = capi.CcSession(graph.as_graph_def().SerializeToString())
    session.run({}, [], ["init"])
    bad = graph_pb2.GraphDef()
    node = bad.node.add(name="broken", op="Identity", input=["no_such_node"])
    node.attr["T"].type = 1
    code, message = refused(lambda: session.extend(bad.SerializeToString()))
    assert code == capi.MODEL and "no_such_node" in message and message.startswith("graph: ")
    np.testing.assert_array_equal(session.read_variable("b"), [0])  # as it was
    code, message = refused(lambda: session.run({}, ["broken"], []))
    assert code == capi.USAGE and "cannot fetch 'broken'" in message
    # a node sent again under its name replaces the old one; the variable keeps its value until assigned
    changed = graph_pb2.GraphDef()
    changed.node.add().CopyFrom(next(n for n in graph.as_graph_def().node if n.name == "b/initial_value"))
    changed.node[0].attr["value"].tensor.tensor_content = np.float32([9.5]).tobytes()
    session.extend(changed.SerializeToString())
    np.testing.assert_array_equal(session.read_variable("b"), [0])
    session.run({}, [], ["b/Assign"])
    np.testing.assert_array_equal(session.read_variable("b"), [9.5])


def test_check_names_the_ops_without_a_kernel_as_graphrun_cc_does(lib):
    path = REPO / "tests" / "models" / "unsupported.pbtxt"
    graph_def = text_format.Parse(path.read_text(), graph_pb2.GraphDef())
    session = capi.CcSession(graph_def.SerializeToString())
    cli = subprocess.run([str(REPO / "build" / "graphrun-cc"), str(path)], capture_output=True, text=True, check=False)
    assert cli.returncode == 3
    expected = cli.stderr.strip().split(": ", 2)[2]  # after "graphrun-cc: <path>: "
    with pytest.raises(capi.GraphrunError) as caught:
        session.check(["image"], ["trt/Relu", "zero"], [])
    assert caught.value.unsupported and str(caught.value) == f"graph: {expected}"
    assert "TRTEngineOp (trt/TRTEngineOp_0)" in expected and "ZeroOut (zero)" in expected
    # only what the fetches need counts
    session.check(["image"], ["image"], [])
    # a value in place of an op without a kernel is not taken (what reads it was never type-checked)
    code, message = refused(lambda: session.check(["trt/TRTEngineOp_0"], ["trt/Relu"], []))
    assert code == capi.USAGE and "cannot feed 'trt/TRTEngineOp_0'" in message
    # run refuses the same way, before anything executes
    code, message = refused(lambda: session.run({"image": np.zeros((1, 28, 28, 1), np.float32)}, ["trt/Relu"], []))
    assert code == capi.UNSUPPORTED and "TRTEngineOp (trt/TRTEngineOp_0)" in message and "ZeroOut" not in message


def test_check_finds_an_unsupported_op_behind_a_target(lib):
    graph_def = regression().as_graph_def()
    graph_def.node.add(name="save", op="SaveV2", input=["w", "b"])
    session = capi.CcSession(graph_def.SerializeToString())
    session.check(["x", "y"], ["loss"], ["train"])
    with pytest.raises(capi.GraphrunError) as caught:
        session.check([], [], ["save"])
    assert caught.value.unsupported and "SaveV2 (save)" in str(caught.value)


def test_bad_names_and_values_are_refused_with_one_line(lib):
    session = capi.CcSession(regression().as_graph_def().SerializeToString())
    session.run({}, [], ["init"])
    x, y = batch(np.random.default_rng(2))
    cases = [
        (lambda: session.run({"nope": x}, ["loss"], []), "unknown feed 'nope'"),
        (lambda: session.run({"x": x, "y": y}, ["loss:7"], []), "cannot fetch 'loss:7'"),
        (lambda: session.run({"x": x, "y": y}, ["los"], []), "cannot fetch 'los'"),
        (lambda: session.run({}, [], ["trian"]), "unknown run target 'trian'"),
        (lambda: session.run({"x": x.astype(np.float64), "y": y}, ["loss"], []), "float64"),
        (lambda: session.run({"x": x[:, :2], "y": y}, ["loss"], []), "[8,2]"),
        (lambda: session.run({"x": x, "x:0": x, "y": y}, ["loss"], []), "more than once"),
        (lambda: session.run({"y": y}, ["loss"], []), "placeholder not fed: x (float32, [?,3])"),
        (lambda: session.run({"gradients/sub_grad/BroadcastGradientArgs:1": np.int32([0])}, ["loss"], []),
         "one output"),
        (lambda: session.check(["nope"], [], []), "unknown feed 'nope'"),
        (lambda: session.check([], ["^loss"], []), "control input"),
    ]
    for call, words in cases:
        code, message = refused(call)
        assert code == capi.USAGE and words in message, message
    # the session still runs after every refusal
    assert session.run({"x": x, "y": y}, ["loss"], [])[0].shape == ()
    session.close()
    code, message = refused(lambda: session.run({}, ["loss"], []))
    assert code == capi.USAGE and "closed" in message


def test_hostile_graph_bytes_never_crash(lib):
    good = regression(4).as_graph_def().SerializeToString()
    outcomes = set()
    for size in list(range(0, 200, 7)) + list(range(200, len(good), max(1, len(good) // 150))):
        try:
            session = capi.CcSession(good[:size])
            session.check([], [], [])
            outcomes.add("loaded")
            session.close()
        except capi.GraphrunError as e:
            assert e.code == capi.MODEL and "\n" not in str(e) and str(e).startswith("graph: "), str(e)
            outcomes.add("refused")
    assert outcomes == {"loaded", "refused"}
    rng = np.random.default_rng(5)
    for _ in range(50):
        garbage = rng.integers(0, 256, rng.integers(1, 400), dtype=np.uint8).tobytes()
        try:
            capi.CcSession(garbage).close()
        except capi.GraphrunError as e:
            assert e.code == capi.MODEL and "\n" not in str(e)
    session = capi.CcSession(good)
    code, message = refused(lambda: session.extend(b"\x0a\xff\xff\xff\xff\x0f"))
    assert (code, message) == (capi.MODEL, "graph extension: not a GraphDef (the protobuf does not parse, or nests "
                                           "deeper than 100 levels)")


def test_unparsable_bytes_are_refused_in_the_cli_words(lib, tmp_path):
    # the same bytes as a .pb file give graphrun-cc's line; the library's names "graph" instead of the path
    bad = b"\x0a\x05\x0a\x01"
    code, message = refused(lambda: capi.CcSession(bad))
    path = tmp_path / "bad.pb"
    path.write_bytes(bad)
    cli = subprocess.run([str(REPO / "build" / "graphrun-cc"), "run", str(path)], capture_output=True, text=True)
    assert cli.returncode == 3
    assert (code, message) == (capi.MODEL, cli.stderr.strip().replace(f"graphrun-cc: {path}", "graph"))


def test_null_arguments_at_the_c_boundary(lib):
    result, error, handle = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()

    def message():
        text = ctypes.cast(error, ctypes.c_char_p).value.decode()
        lib.graphrun_free_string(error)
        return text

    code = lib.graphrun_session_run(None, 0, None, None, None, None, None, 0, None, 0, None, ctypes.byref(result),
                                    ctypes.byref(error))
    assert code == capi.USAGE and "no session" in message() and not result.value
    assert lib.graphrun_session_create(None, 10, 1, ctypes.byref(handle), ctypes.byref(error)) == capi.MODEL
    assert "null" in message() and not handle.value
    assert lib.graphrun_session_create(b"", 0, 1, None, ctypes.byref(error)) == capi.USAGE
    message()
    session = capi.CcSession(regression().as_graph_def().SerializeToString())
    assert lib.graphrun_session_check(session._handle, 2, None, 0, None, 0, None, ctypes.byref(error)) == capi.USAGE
    assert "NULL" in message()
    names = (ctypes.c_char_p * 1)(None)
    assert lib.graphrun_session_check(session._handle, 0, None, 1, names, 0, None, ctypes.byref(error)) == capi.USAGE
    assert "fetches 0 is NULL" in message()
    assert lib.graphrun_session_read_variable(session._handle, None, ctypes.byref(result), ctypes.byref(error)) \
        == capi.USAGE
    message()
    dims = (ctypes.c_int64 * 1)(2 ** 62)
    assert lib.graphrun_session_assign_variable(session._handle, b"b", b"float32", 1, dims, None,
                                                ctypes.byref(error)) == capi.USAGE
    assert "'b'" in message()
    lib.graphrun_free_session(None)


def test_many_plans_and_threads_give_the_serial_answers(lib):
    """More (feeds, fetches, targets) than the plan cache holds, and sessions trained from two threads
    at once (each with its own lock), give what one thread computes alone."""
    graph_bytes = regression(4).as_graph_def().SerializeToString()
    session = capi.CcSession(graph_bytes)
    session.run({}, [], ["init"])
    x, y = batch(np.random.default_rng(4), 5)
    names = [op.name for op in regression(4).get_operations() if op.type in ("Add", "AddV2", "MatMul", "Relu",
                                                                             "Sub", "Square", "Mean")]
    first = {n: session.run({"x": x, "y": y}, [n], [])[0] for n in names}
    for repeat in range(3):
        for k in range(len(names)):  # pairs in changing orders: far more plans than the cache keeps
            pair = [names[k], names[(k + repeat + 1) % len(names)]]
            for n, value in zip(pair, session.run({"x": x, "y": y}, pair, [])):
                np.testing.assert_array_equal(value, first[n])

    def train(out):
        own = capi.CcSession(graph_bytes)
        own.run({}, [], ["init"])
        out.extend(own.run({"x": x, "y": y}, ["loss"], ["train"])[0] for _ in range(20))

    serial, results = [], [[], []]
    train(serial)
    threads = [threading.Thread(target=train, args=(r,)) for r in results]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, serial)


CLOSE_DURING_RUN = """
import threading, time
import numpy as np
import graphdef as tf
from graphdef._native import capi
graph = tf.Graph()
with graph.as_default():
    x = tf.placeholder(tf.float32, [None, None], name="x")
    y = x
    for _ in range(40):
        y = tf.matmul(y, x)
        y = y / tf.reduce_max(tf.abs(y))
    tf.identity(y, name="out")
session = capi.CcSession(graph.as_graph_def().SerializeToString())
a = np.random.default_rng(0).random((600, 600)).astype(np.float32)
want = a.astype(np.float64)
y = want
for _ in range(40):
    y = y @ want
    y = y / np.abs(y).max()
got = {}
def run():
    got["out"] = session.run({"x": a}, ["out"])[0]
thread = threading.Thread(target=run)
thread.start()
time.sleep(0.02)
session.close()  # while the run is in the library
thread.join()
np.testing.assert_allclose(got["out"], y, rtol=1e-3, atol=1e-4)
try:
    session.run({"x": a}, ["out"])
except capi.GraphrunError as e:
    assert "closed" in str(e)
else:
    raise AssertionError("a closed session ran")
print("ok")
"""


@pytest.mark.slow
def test_close_from_another_thread_waits_for_the_run_in_the_library(lib):
    """TF1 lets another thread close a session: the run in progress finishes (against float64 numpy)
    and the session is freed after it, never under it (that was a segfault)."""
    proc = subprocess.run([sys.executable, "-c", CLOSE_DURING_RUN], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", (proc.returncode, proc.stderr[-2000:])
