"""graphrun --run and --steps: training from the command line, exactly as graphrun-cc does it.

The graphs are built here with graphdef's API, as a user builds a training graph. What
graphrun trains is checked three ways: against graphdef.Session doing the same training in
the test, against gradient descent written out in numpy (bit for bit), and against
build/graphrun-cc, whose stdout must be the same bytes for the same command line.
"""

import numpy as np
import pytest

import graphdef as tf
from graphdef.graphrun import cli
from graphdef.client import runtime
from tests.support.cc_helpers import run_cc
from tests.conformance.replay import from_json_output
from tests.support.graphrun_helpers import counter_model, fails, graphrun, json_line, ok
from tests.support.numerics_policy import assert_same

F = np.float32


def same_as_cc(capsys, runner, *argv):
    """graphrun's stdout for argv, after checking graphrun-cc exits 0 with the very same bytes."""
    out = ok(capsys, *argv)
    code, cc_out, cc_err = run_cc(runner, *argv)
    assert (code, cc_err) == (0, ""), cc_err
    assert out == cc_out
    return out


def decoded(stdout):
    """{fetch name: ndarray} from a --json stdout, exactly (shortest round-trip digits)."""
    return dict(from_json_output(o) for o in json_line(stdout)["outputs"])


# -- models ---------------------------------------------------------------------------------

OPTIMIZERS = {
    "gradient_descent": lambda: tf.train.GradientDescentOptimizer(0.2),
    "momentum": lambda: tf.train.MomentumOptimizer(0.02, 0.9),
    "nesterov": lambda: tf.train.MomentumOptimizer(0.02, 0.9, use_nesterov=True),
    "adam": lambda: tf.train.AdamOptimizer(0.05),
}


def regression_data(rows=4):
    """Features [rows,3] and targets [rows]; fewer than 8 rows keeps every sum in the graph a
    plain left-to-right sum, in numpy as in both runners."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=(rows, 3)).astype(F)
    return x, (x @ np.array([1.5, -2.0, 0.5], F) + F(0.75)).astype(F)


class Regression:
    """pred = sum(x * w, axis=1) + b, mean squared error `loss`, `train` and `init`, saved to a file."""

    def __init__(self, tmp_path, optimizer):
        self.graph = tf.Graph()
        with self.graph.as_default():
            x = tf.placeholder(tf.float32, [None, 3], name="x")
            y = tf.placeholder(tf.float32, [None], name="y")
            w = tf.Variable(np.zeros(3, F), name="w")
            b = tf.Variable(F(0), name="b")
            loss = tf.reduce_mean(tf.square(tf.reduce_sum(x * w, axis=1) + b - y), name="loss")
            OPTIMIZERS[optimizer]().minimize(loss, name="train")
            tf.global_variables_initializer()
        self.path = tmp_path / f"{optimizer}.pb"
        tf.save(self.graph, str(self.path))
        x, y = regression_data()
        self.feeds = {"x": x, "y": y}
        self.data = tmp_path / "data.npz"
        np.savez(self.data, **self.feeds)

    def session_training(self, steps, fetches=("w:0", "b:0", "loss:0")):
        """The same training with graphdef.Session, the way a Python program does it."""
        feed_dict = {f"{name}:0": value for name, value in self.feeds.items()}
        with tf.Session(graph=self.graph) as sess:
            sess.run("init")
            for _ in range(steps):
                sess.run("train", feed_dict)
            return dict(zip(fetches, sess.run(list(fetches), feed_dict)))

    def argv(self, steps, *extra):
        return [self.path, "--run", "init", "--run", "train", "--steps", steps, "--feeds", self.data,
                "--fetch", "w:0", "--fetch", "b", "--fetch", "loss", *extra]


@pytest.fixture
def counter(tmp_path):
    return counter_model(tmp_path)


# -- training -------------------------------------------------------------------------------

@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_training_matches_the_session(capsys, tmp_path, optimizer):
    model = Regression(tmp_path, optimizer)
    got = decoded(ok(capsys, *model.argv(150, "--json")))
    expected = model.session_training(150)
    assert list(got) == ["w:0", "b:0", "loss:0"]
    for name, value in expected.items():
        assert_same(got[name], value)
    assert got["loss:0"] < F(0.01) * np.mean(model.feeds["y"] ** 2)  # it did learn


def test_gradient_descent_matches_numpy_bit_for_bit(capsys, tmp_path):
    model = Regression(tmp_path, "gradient_descent")
    got = decoded(ok(capsys, *model.argv(200, "--json")))
    # The gradient graph's float32 arithmetic, operation by operation: d(mean)/d(pred) is
    # 1/4 each, Square's gradient 2 * (pred - y), and the batch sums run in row order.
    x, y = model.feeds["x"], model.feeds["y"]
    w, b, lr = np.zeros(3, F), F(0), F(0.2)
    for _ in range(200):
        g = F(1) / F(len(y)) * (F(2) * ((x * w).sum(axis=1) + b - y))
        w, b = w - lr * (x * g[:, None]).sum(axis=0), b - lr * g.sum()
    assert_same(got["w:0"], w)
    assert_same(got["b:0"], b)


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
@pytest.mark.parametrize("output", ["text", "json"])
def test_training_prints_what_graphrun_cc_prints(capsys, runner, tmp_path, optimizer, output):
    model = Regression(tmp_path, optimizer)
    extra = ["--json"] if output == "json" else []
    out = same_as_cc(capsys, runner, *model.argv(120, *extra))
    if output == "text":
        assert [line.split(" = ")[0] for line in out.splitlines()] == [
            "w:0 float32 [3]", "b:0 float32 []", "loss:0 float32 []"]


def test_without_steps_the_last_run_executes_once(capsys, runner, tmp_path):
    model = Regression(tmp_path, "adam")
    once = same_as_cc(capsys, runner, model.path, "--run", "init", "--run", "train", "--feeds", model.data,
                      "--fetch", "w:0", "--fetch", "b", "--fetch", "loss", "--json")
    assert once == ok(capsys, *model.argv(1, "--json"))
    got, expected = decoded(once), model.session_training(1)
    for name, value in expected.items():
        assert_same(got[name], value)
    assert got["w:0"].any()


def test_feeds_from_flags_train_as_feeds_from_an_npz(capsys, runner, tmp_path):
    model = Regression(tmp_path, "nesterov")
    np.save(tmp_path / "x.npy", model.feeds["x"])
    argv = [model.path, "--run", "init", "--run", "train", "--steps", "40", f"--feed=x=@{tmp_path / 'x.npy'}",
            "--feed", f"y={model.feeds['y'].tolist()}", "--fetch", "w:0", "--fetch", "b", "--fetch", "loss"]
    assert same_as_cc(capsys, runner, *argv) == ok(capsys, *model.argv(40))


def test_a_step_is_planned_once(capsys, tmp_path, monkeypatch):
    """1000 steps make one plan for the training step: one for init, one for train, one
    for the fetches, however many steps."""
    plans = []

    make_plan = runtime.make_plan

    def counted(session, fetches, feed_keys):
        plans.append(fetches)
        return make_plan(session, fetches, feed_keys)

    # Every plan of a Session, on either engine, is made by runtime.make_plan: counting its calls is
    # the direct evidence.
    monkeypatch.setattr(runtime, "make_plan", counted)
    model = Regression(tmp_path, "gradient_descent")
    ok(capsys, *model.argv(1000))
    assert len(plans) == 3
    assert (plans[0].name, plans[1].name) == ("init", "train")
    assert [t.name for t in plans[2]] == ["w:0", "b:0", "loss:0"]


# -- the runs: order, repetition, state -----------------------------------------------------

def test_runs_execute_in_order_and_the_last_one_repeats(capsys, runner, counter):
    # ((0 + 1) * 2 + 1) doubled 3 times = 24
    assert same_as_cc(capsys, runner, counter, "--run", "init", "--run", "inc", "--run", "double", "--run", "inc:0",
                      "--run", "double", "--steps", "3", "--fetch", "v") == "v:0 float64 [] = 24.0\n"
    assert same_as_cc(capsys, runner, counter, "--run", "init", "--run", "inc", "--steps=5", "--fetch=v:0",
                      "--json") == (
        '{"outputs": [{"name": "v:0", "dtype": "float64", "shape": [], "values": 5.0}]}\n')


def test_the_last_steps_counts_wherever_it_is(capsys, runner, counter):
    # --steps applies to the last --run, even when given before it, and the last --steps wins.
    assert same_as_cc(capsys, runner, counter, "--steps", "7", "--run", "init", "--steps", "2", "--run", "inc",
                      "--steps", "3", "--fetch", "v") == "v:0 float64 [] = 3.0\n"


def test_runs_without_fetches_print_nothing(capsys, runner, counter):
    assert same_as_cc(capsys, runner, counter, "--run", "init", "--run", "inc") == ""
    assert same_as_cc(capsys, runner, counter, "--run", "init", "--json") == '{"outputs": []}\n'
    # Without --run the default fetches still apply (here every sink, fed).
    assert same_as_cc(capsys, runner, counter, "--feed", "k=1", "--feed", "unused=[1,2]", "--fetch", "twice") == (
        "twice:0 float64 [2] = [2.0, 4.0]\n")


def test_each_run_needs_only_its_own_placeholders(capsys, runner, counter):
    assert same_as_cc(capsys, runner, counter, "--run", "init", "--run", "add_k", "--feed", "k=2.5", "--run", "inc",
                      "--fetch", "v") == "v:0 float64 [] = 3.5\n"


def test_a_run_needing_an_unfed_placeholder_is_refused_before_any_run(capsys, runner, counter, monkeypatch):
    executed = []

    class WatchedSession(tf.Session):
        def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
            executed.append(fetches)
            return super().run(fetches, feed_dict, options, run_metadata)

    monkeypatch.setattr(cli, "Session", WatchedSession)
    argv = [counter, "--run", "init", "--run", "inc", "--run", "add_k", "--fetch", "v"]
    err = fails(capsys, 2, *argv)
    assert executed == []  # init and inc were planned, checked, and never executed
    assert err == ("graphrun: placeholder not fed: k (float64, []); use --feed NAME=VALUE, --feeds FILE.npz "
                   "or --random\n")
    code, out, cc_err = run_cc(runner, *argv)
    assert (code, out) == (2, "")
    assert cc_err == ("graphrun-cc: placeholder not fed: k (float64, []); use --feed NAME=VALUE, --feeds FILE.npz "
                      "or --random\n")
    # The fetches are checked before any run too.
    fails(capsys, 2, counter, "--run", "init", "--fetch", "twice", mentions=["unused (float64, [2])"])
    assert executed == []


def test_unfed_placeholders_are_listed_in_file_order(capsys, runner, tmp_path):
    """A file not in dependency order: the graph imports 'late' first, the file lists 'early' first."""
    path = tmp_path / "order.pbtxt"
    path.write_text("""
node { name: "first" op: "Identity" input: "late" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "early" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "late" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "both" op: "AddV2" input: "first" input: "early" attr { key: "T" value { type: DT_FLOAT } } }
""")
    both = "placeholders not fed: early (float32, <unknown>), late (float32, <unknown>); use --feed NAME=VALUE"
    one = "placeholder not fed: early (float32, <unknown>); use --feed NAME=VALUE"
    for argv, listed in [([path, "--run", "both"], both),
                         ([path, "--run", "first", "--run", "both", "--feed", "late=1", "--steps", "2"], one)]:
        err = fails(capsys, 2, *argv)
        code, _, cc_err = run_cc(runner, *argv)
        assert code == 2
        assert err.startswith(f"graphrun: {listed}") and cc_err.startswith(f"graphrun-cc: {listed}"), (err, cc_err)
    assert same_as_cc(capsys, runner, path, "--run", "both", "--feed", "early=1", "--feed", "late=2",
                      "--fetch", "both") == "both:0 float32 [] = 3.0\n"


def test_fed_placeholders_and_variables_as_targets(capsys, runner, counter):
    # A fed placeholder as a target does nothing; a variable as a target is read.
    assert same_as_cc(capsys, runner, counter, "--run", "init", "--run", "k", "--run", "k:0", "--run", "v",
                      "--run", "inc", "--feed", "k=4", "--fetch", "v", "--fetch", "k") == (
        "v:0 float64 [] = 1.0\nk:0 float64 [] = 4.0\n")


def test_random_feeds_cover_what_the_runs_need(capsys, tmp_path):
    model = Regression(tmp_path, "gradient_descent")
    argv = [model.path, "--run", "init", "--run", "train", "--steps", "3", "--random", "--seed", "5",
            "--shape", "x=6,3", "--shape", "y=6", "--fetch", "w", "--fetch", "x"]
    first = ok(capsys, *argv)
    assert ok(capsys, *argv) == first  # the same seed, the same training
    lines = first.splitlines()
    assert lines[0].startswith("w:0 float32 [3] = ") and lines[1].startswith("x:0 float32 [6,3] = ")
    assert lines[0] != "w:0 float32 [3] = [0.0, 0.0, 0.0]"
    fails(capsys, 2, model.path, "--run", "init", "--run", "train", "--random", mentions=["--shape x=N,3"])


def test_out_saves_the_fetches_after_the_runs(capsys, tmp_path, counter):
    out = ok(capsys, counter, "--run", "init", "--run", "inc", "--steps", "4", "--fetch", "v", "--out",
             tmp_path / "saved")
    assert out == f"v:0 float64 [] -> {tmp_path / 'saved' / 'v_0.npy'}\n"
    assert np.load(tmp_path / "saved" / "v_0.npy") == 4.0


def test_help_documents_run_and_steps(capsys):
    out = ok(capsys, "--help")
    assert "--run TARGET" in out and "--steps N" in out
    assert "graphrun model.pb --run init --run train --steps 1000" in out


# -- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["--run", "nope"], "unknown run target 'nope': no node is named 'nope'"),
    (["--run", "inc:1"], "unknown run target 'inc:1': node 'inc' (AssignAdd) has 1 output"),
    (["--run", "twice:7"], "unknown run target 'twice:7': node 'twice' (Identity) has 1 output"),
    (["--run", "init:0"], "unknown run target 'init:0': node 'init' (NoOp) has no outputs; run it as 'init'"),
    (["--run", "^init"], "unknown run target '^init': name the node without '^'"),
    (["--run", "init:"], "unknown run target 'init:': no node is named 'init:'"),
    (["--run=", "--fetch", "v"], "unknown run target '': no node is named ''"),
    (["--steps", "2"], "--steps repeats the last --run target; give one with --run"),
    (["--steps", "2", "--fetch", "v"], "--steps repeats the last --run target; give one with --run"),
    (["--run", "init", "--steps", "0"], "--steps needs a whole number of at least 1, got '0'"),
    (["--run", "init", "--steps", "-3"], "--steps needs a whole number of at least 1, got '-3'"),
    (["--run", "init", "--steps", "1e3"], "--steps needs a whole number of at least 1, got '1e3'"),
    (["--run", "init", "--steps", "+2"], "--steps needs a whole number of at least 1, got '+2'"),
    (["--run", "init", "--steps", "1234567890123456789"],
     "--steps needs a whole number of at least 1, got '1234567890123456789'"),
    (["--run", "init", "--steps", "0", "--steps", "3"], "--steps needs a whole number of at least 1, got '0'"),
    (["--run", "init", "--run", "add_k"],
     "placeholder not fed: k (float64, []); use --feed NAME=VALUE, --feeds FILE.npz or --random"),
])
def test_bad_runs_exit_2_as_in_graphrun_cc(capsys, runner, counter, args, message):
    assert fails(capsys, 2, counter, *args) == f"graphrun: {message}\n"
    code, out, err = run_cc(runner, counter, *args)
    assert (code, out) == (2, "")
    assert err == f"graphrun-cc: {message}\n"


def test_a_run_without_a_target_exits_2(capsys, counter):
    fails(capsys, 2, counter, "--run", mentions=["--run"])


def test_errors_inside_a_run_exit_4_naming_the_node(capsys, runner, tmp_path, counter):
    model = Regression(tmp_path, "gradient_descent")
    # No init: the first variable the training step reads is named, by both runners.
    for argv, mentions in [
        ([model.path, "--run", "train", "--feeds", model.data], ["variable 'w' is not initialized"]),
        ([counter, "--run", "v"], ["variable 'v' is not initialized"]),
        ([counter, "--run", "inc", "--steps", "3"], ["variable 'v' is not initialized"]),
    ]:
        fails(capsys, 4, *argv, mentions=mentions)
        code, out, err = run_cc(runner, *argv)
        assert (code, out) == (4, "") and all(m in err for m in mentions), err
    # Targets of the wrong length: the node that fails is named.
    x, y = model.feeds["x"], model.feeds["y"]
    np.savez(tmp_path / "bad.npz", x=x, y=y[:3])
    argv = [model.path, "--run", "init", "--run", "train", "--steps", "5", "--feeds", tmp_path / "bad.npz",
            "--fetch", "w"]
    fails(capsys, 4, *argv, mentions=["node 'sub' (Sub)"])
    code, out, err = run_cc(runner, *argv)
    assert (code, out) == (4, "") and err.startswith("graphrun-cc: node 'sub' (Sub): "), err


def test_interrupted_training_exits_130(capsys, tmp_path, monkeypatch):
    model = Regression(tmp_path, "gradient_descent")
    steps = []

    class Interrupted(tf.Session):
        def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
            steps.append(fetches)
            if len(steps) == 10:
                raise KeyboardInterrupt
            return super().run(fetches, feed_dict, options, run_metadata)

    monkeypatch.setattr(cli, "Session", Interrupted)
    code, out, err = graphrun(capsys, *model.argv(1000))
    assert (code, out, err) == (130, "", "graphrun: interrupted\n")
