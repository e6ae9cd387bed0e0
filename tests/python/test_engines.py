"""Session(engine=...): the same graphs on the numpy engine and on the C++ core in process, each
against a float64 oracle written here, within the ops' numerics; auto's choice and fallback;
variables handed between engines; a graph that grows after its session started."""

import collections
import threading
import time

import numpy as np
import pytest

import graphdef as tf
from graphdef._native import capi
from graphdef.client import cc_engine
from graphdef.client.session import plan_engine
from graphdef.framework.errors import FailedPreconditionError, InvalidArgumentError, UnimplementedError
from tests.support.numerics_policy import assert_conforms

ENGINES = ["python", "cc"]


@pytest.fixture(scope="module", autouse=True)
def library():
    """The C++ core must load here: a missing library fails these tests, never skips them."""
    try:
        return capi.load_library()
    except capi.LibraryMissing as e:
        pytest.fail(f"the cc engine needs libgraphrun.so: {e}")


def _mlp(graph):
    rng = np.random.default_rng(0)
    w1, b1 = rng.normal(size=(3, 5)).astype(np.float32), rng.normal(size=5).astype(np.float32)
    w2 = rng.normal(size=(5, 2)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    hidden = tf.nn.relu(tf.matmul(x, tf.constant(w1)) + tf.constant(b1), name="hidden")
    probs = tf.nn.softmax(tf.matmul(hidden, tf.constant(w2)), name="probs")

    def oracle(batch):
        h = np.maximum(batch.astype(np.float64) @ w1 + b1, 0)
        logits = h @ w2
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return h, e / e.sum(axis=1, keepdims=True)
    return x, hidden, probs, oracle


@pytest.mark.parametrize("engine", ENGINES)
def test_inference_agrees_with_a_float64_oracle(graph, engine):
    x, hidden, probs, oracle = _mlp(graph)
    batch = np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32)
    with tf.Session(engine=engine) as sess:
        got = sess.run({"p": probs, "h": [hidden]}, {x: batch})
        assert plan_engine(sess, {"p": probs, "h": [hidden]}, {x: batch}) == engine
    h, p = oracle(batch)
    assert got["p"].dtype == np.float32 and got["p"].shape == (4, 2)
    assert_conforms(got["p"], p.astype(np.float32), graph, "probs")
    assert_conforms(got["h"][0], h.astype(np.float32), graph, "hidden")


@pytest.mark.parametrize("engine", ENGINES)
def test_fetch_structures_feeds_and_result_types(graph, engine):
    a = tf.constant(15, name="a")
    b = tf.constant(5, name="b")
    res = tf.divide(tf.multiply(a, b, name="Multiply"), tf.add(a, b, name="Add"), name="Divide")
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    doubled = tf.multiply(x, 2.0, name="doubled")
    total = tf.reduce_sum(doubled, name="total")
    Pair = collections.namedtuple("Pair", "left right")
    feed = np.array([[1, 2], [3, 4]], np.float32)
    with tf.Session(engine=engine) as sess:
        assert sess.run(res) == 3.75 and type(sess.run(res)) is np.float64
        assert sess.run("Divide") is None  # an Operation: run, nothing returned
        assert sess.run({"r": res, "nested": [res.op, "Add:0"]}) == {"r": 3.75, "nested": [None, 20]}
        assert sess.run(Pair(res, "Add:0")) == Pair(3.75, 20)
        assert sess.run((res, res)) == (3.75, 3.75)  # the same tensor twice
        for key in (x, "x:0", "x"):
            value = sess.run(total, {key: feed})
            assert value == 20.0 and type(value) is np.float32
        # a lossless conversion is accepted; a fed tensor fetched comes back as fed
        got_doubled, got_x = sess.run([doubled, x], {x: [[1, 2]]})
        assert got_doubled.dtype == np.float32 and got_doubled.tolist() == [[2.0, 4.0]]
        assert got_x.dtype == np.float32 and got_x.tolist() == [[1.0, 2.0]]
        # feeding an intermediate tensor cuts the graph there: x is no longer needed
        assert sess.run(total, {doubled: np.ones((3, 2), np.float32)}) == 6.0
        out = sess.run(doubled, {x: feed})
        out[0, 0] = 100  # the caller owns what it gets
        assert sess.run(doubled, {x: feed})[0, 0] == 2.0


@pytest.mark.parametrize("engine", ENGINES)
def test_errors_name_the_node_in_both_engines(graph, engine):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    i = tf.placeholder(tf.int32, [], name="i")
    y = tf.reduce_sum(x) + tf.cast(i, tf.float32)
    r = tf.reshape(x, [3], name="r")
    w = tf.Variable(1.0, name="w")
    with tf.Session(engine=engine) as sess:
        with pytest.raises(InvalidArgumentError, match=r"placeholder 'i' \(int32, \[\]\) was not fed"):
            sess.run(y, {x: np.zeros((1, 2))})
        with pytest.raises(ValueError, match=r"shape \[3\] to 'x:0', which has shape \[\?,2\]"):
            sess.run(y, {x: [1.0, 2.0, 3.0], i: 1})
        with pytest.raises(TypeError, match="'i:0' \\(int32\\)"):
            sess.run(y, {x: np.zeros((1, 2)), i: 1.5})
        with pytest.raises(InvalidArgumentError, match="'r'"):
            sess.run(r, {x: np.zeros((2, 2), np.float32)})
        with pytest.raises(FailedPreconditionError, match="'w'"):
            sess.run(w)


def _linear_regression(graph):
    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.placeholder(tf.float32, [None], name="y")
    w = tf.Variable(0.5, name="w")
    b = tf.Variable(0.1, name="b")
    loss = tf.reduce_mean(tf.square(w * x + b - y), name="loss")
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    return x, y, w, b, loss, train


def _descend(w, b, xs, ys, steps, rate=0.01):
    """The float64 oracle: d/dw mean((w x + b - y)^2) = mean(2 (w x + b - y) x), d/db likewise."""
    for _ in range(steps):
        err = w * xs + b - ys
        w, b = w - rate * np.mean(2 * err * xs), b - rate * np.mean(2 * err)
    return w, b


@pytest.mark.parametrize("engine", ENGINES + ["auto"])
def test_training_steps_keep_variables_in_the_engine(graph, engine):
    x, y, w, b, loss, train = _linear_regression(graph)
    xs = np.linspace(-1, 1, 8).astype(np.float32)
    ys = (3 * xs - 0.5).astype(np.float32)
    with tf.Session(engine=engine) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(20):
            sess.run(train, {x: xs, y: ys})
        got_w, got_b = sess.run([w, b])
        assert plan_engine(sess, train, {x: xs, y: ys}) == ("cc" if engine == "auto" else engine)
    want_w, want_b = _descend(0.5, 0.1, xs.astype(np.float64), ys.astype(np.float64), 20)
    # twenty float32 steps of a few ops each against float64: well within 1e-5 of a value near 1
    np.testing.assert_allclose([got_w, got_b], [want_w, want_b], rtol=1e-5)
    assert type(got_w) is np.float32


def test_auto_runs_on_python_what_cc_has_no_kernel_for(graph):
    x = tf.placeholder(tf.float32, [3], name="x")
    # graphrun-cc has no float16 kernels (its Sqrt takes float32 and float64)
    root = tf.cast(tf.sqrt(tf.cast(x, tf.float16), name="root"), tf.float32, name="back")
    value = np.array([1, 4, 9], np.float32)
    with tf.Session() as sess:
        got = sess.run(root, {x: value})
        assert got.dtype == np.float32 and got.tolist() == [1.0, 2.0, 3.0]
        assert plan_engine(sess, root, {x: value}) == "python"
    with tf.Session(engine="cc") as sess:
        with pytest.raises(UnimplementedError, match=r"half tensors.*\(Cast\)"):
            sess.run(root, {x: value})


def test_variables_follow_the_latest_value_across_engines(graph):
    """One auto session: w trained on cc, read by a plan only python runs, written there, read on cc."""
    x, y, w, b, loss, train = _linear_regression(graph)
    magnitude = tf.cast(tf.sqrt(tf.cast(w * w, tf.float16)), tf.float32, name="magnitude")  # python only
    set_from_python = tf.assign(w, tf.cast(tf.cast(w, tf.float16) * tf.constant(2, tf.float16), tf.float32))
    doubled_on_cc = tf.multiply(w, 2.0, name="doubled_on_cc")
    xs = np.linspace(-1, 1, 8).astype(np.float32)
    ys = (3 * xs - 0.5).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(5):
            sess.run(train, {x: xs, y: ys})
        assert plan_engine(sess, train, {x: xs, y: ys}) == "cc"
        assert plan_engine(sess, magnitude) == "python" and plan_engine(sess, set_from_python) == "python"
        want_w, _ = _descend(0.5, 0.1, xs.astype(np.float64), ys.astype(np.float64), 5)
        np.testing.assert_allclose(sess.run(magnitude), abs(want_w), rtol=1e-3)  # float16's precision
        after = sess.run(set_from_python)  # written by python: cc must see it next
        assert sess.run(doubled_on_cc) == np.float32(after) * 2
        assert plan_engine(sess, doubled_on_cc) == "cc"
        b_before = sess.run(b)
        sess.run(train, {x: xs, y: ys})  # and a cc step from python's value
        want, _ = _descend(float(after), float(b_before), xs.astype(np.float64), ys.astype(np.float64), 1)
        np.testing.assert_allclose(sess.run(w), want, rtol=1e-5)
        assert sess._variables["w"] == sess.run(w)  # checkpoints read the latest value through this


@pytest.mark.parametrize("engine", ["cc", "auto"])
def test_a_graph_grown_after_the_session_started_runs(graph, engine):
    w = tf.Variable(2.0, name="w")
    with tf.Session(engine=engine) as sess:
        sess.run(w.initializer)
        assert sess.run(w) == 2.0
        bump = tf.assign_add(w, 3.0, name="bump")  # added after the first run, like a late train op
        scaled = tf.multiply(w, 10.0, name="scaled")
        v = tf.Variable([1.0, 2.0], name="v")
        sess.run([bump, v.initializer])
        assert sess.run(scaled) == 50.0 and sess.run(v).tolist() == [1.0, 2.0]
        assert plan_engine(sess, scaled) == "cc"


def test_checkpoints_save_and_restore_what_cc_trained(graph, tmp_path):
    x, y, w, b, loss, train = _linear_regression(graph)
    saver = tf.train.Saver()
    xs = np.linspace(-1, 1, 8).astype(np.float32)
    with tf.Session(engine="cc") as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {x: xs, y: 2 * xs})
        trained = sess.run([w, b])
        path = saver.save(sess, str(tmp_path / "model"))
    with tf.Session(engine="cc") as sess:
        saver.restore(sess, path)
        assert sess.run([w, b]) == trained


def test_the_engine_is_checked_and_the_environment_sets_the_default(graph, monkeypatch):
    with pytest.raises(ValueError, match="unknown engine 'gpu'"):
        tf.Session(engine="gpu")
    c = tf.constant(2.0) * 3.0
    monkeypatch.setenv("GRAPHDEF_ENGINE", "python")
    with tf.Session() as sess:
        assert sess.engine == "python" and sess.run(c) == 6.0 and plan_engine(sess, c) == "python"
    monkeypatch.setenv("GRAPHDEF_ENGINE", "cc")
    with tf.Session() as sess:
        assert sess.engine == "cc" and plan_engine(sess, c) == "cc"
    monkeypatch.setenv("GRAPHDEF_ENGINE", "fast")
    with pytest.raises(ValueError, match="GRAPHDEF_ENGINE"):
        tf.Session()


def test_runner_runs_on_either_engine_and_pickles_its_choice():
    import pickle
    from tests.support.graphrun_helpers import MLP
    batch = np.random.default_rng(3).normal(size=(5, 16)).astype(np.float32)
    numpy_runner = tf.Runner(MLP, engine="python")
    cc_runner = tf.Runner(MLP, engine="cc")
    assert plan_engine(cc_runner._session, cc_runner._targets, {"x:0": batch}) == "cc"
    (name, want), = numpy_runner.run(batch).items()
    assert_conforms(cc_runner.run(batch)[name], want, MLP, name)  # the engines agree within the policy
    assert pickle.loads(pickle.dumps(cc_runner)).engine == "cc"


@pytest.mark.parametrize("engine", ENGINES)
def test_a_while_loop_runs_on_either_engine(graph, engine):
    """Collatz steps from a fed start, counted by a TF1 while_loop: Switch, Merge and loop frames."""
    start = tf.placeholder(tf.int32, [], name="start")
    _, steps = tf.while_loop(lambda n, k: n > 1,
                             lambda n, k: (tf.where(tf.equal(n % 2, 0), n // 2, 3 * n + 1), k + 1), [start, 0])

    def collatz(n, k=0):
        return k if n == 1 else collatz(n // 2 if n % 2 == 0 else 3 * n + 1, k + 1)
    with tf.Session(engine=engine) as sess:
        assert [sess.run(steps, {start: n}) for n in (1, 6, 27)] == [collatz(n) for n in (1, 6, 27)]
        assert plan_engine(sess, steps, {start: 6}) == engine


@pytest.mark.slow
def test_two_threads_planning_first_share_one_cc_runtime(graph, monkeypatch):
    """The first plans of two threads at once: one C++ session, so what one runs (an initializer)
    the other's plans see."""
    w = tf.Variable(np.float32(2.0), name="w")
    c = tf.constant(1.0, name="c")
    made = []

    class Slow(capi.CcSession):
        def __init__(self, *args, **kwargs):
            made.append(self)
            time.sleep(0.3)  # the window in which the other thread also finds no cc runtime
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(cc_engine.capi, "CcSession", Slow)
    with tf.Session(engine="cc") as sess:
        start, errors = threading.Barrier(2), []

        def first_run(fetch):
            start.wait()
            try:
                sess.run(fetch)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)
        threads = [threading.Thread(target=first_run, args=(f,)) for f in (w.initializer, c)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and len(made) == 1
        assert sess.run(w) == np.float32(2.0)


def test_an_op_added_while_the_graph_is_sent_is_sent_next_time(graph, monkeypatch):
    """Another thread adds an op while this one extends the C++ session (in the library, the GIL
    released): the next run that needs it must send it, not take the graph as already sent."""
    a = tf.constant(2.0, name="a")
    b = tf.multiply(a, 3.0, name="b")
    with tf.Session(engine="cc") as sess:
        assert sess.run(b) == 6.0
        c = tf.add(b, 1.0, name="c")
        late = []
        extend = capi.CcSession.extend

        def extend_while_another_thread_adds(self, graph_def_bytes):
            extend(self, graph_def_bytes)
            if not late:
                late.append(tf.multiply(a, 10.0, name="late"))
        monkeypatch.setattr(capi.CcSession, "extend", extend_while_another_thread_adds)
        assert sess.run(c) == 7.0
        monkeypatch.setattr(capi.CcSession, "extend", extend)
        assert sess.run(late[0]) == np.float32(2.0 * 10.0)
