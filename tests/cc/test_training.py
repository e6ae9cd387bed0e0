"""graphrun-cc training: --run, --steps and --feeds, against graphdef.Session and numpy.

Every graph is built with the generated protobuf classes (not the graphdef package), and every
expected value is a literal or numpy worked out in the test: an oracle independent of the runner.
Shared builders and runners are in tests/support/cc_helpers.py.
"""

import struct

import numpy as np
import pytest

from tests.support.cc_helpers import Graph, fails, ok, outputs, regression_data
from tests.support.graphrun_helpers import counter_model
from tests.support.numerics_policy import assert_same


OPTIMIZERS = {
    "gradient_descent": lambda tf: tf.train.GradientDescentOptimizer(0.2),
    "momentum": lambda tf: tf.train.MomentumOptimizer(0.02, 0.9, use_nesterov=True),
    "adam": lambda tf: tf.train.AdamOptimizer(0.05),
}


def regression_model(tmp_path, optimizer):
    """pred = sum(x * w, axis=1) + b, mean squared error, `train` and `init`; saved with graphdef.save.

    Returns the model's path and a function that trains the same graph with graphdef.Session.
    """
    import graphdef as tf

    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, [None], name="y")
        w = tf.Variable(np.zeros(3, np.float32), name="w")
        b = tf.Variable(np.float32(0), name="b")
        loss = tf.reduce_mean(tf.square(tf.reduce_sum(x * w, axis=1) + b - y), name="loss")
        OPTIMIZERS[optimizer](tf).minimize(loss, name="train")
        tf.global_variables_initializer()
    path = tmp_path / "model.pb"
    tf.save(graph, str(path))

    def session_training(feeds, steps):
        with tf.Session(graph=graph) as sess:
            sess.run("init")
            for _ in range(steps):
                sess.run("train", {f"{name}:0": value for name, value in feeds.items()})
            return dict(zip(["w:0", "b:0"], sess.run(["w:0", "b:0"])))

    return path, session_training


def training_outputs(runner, model, data, *args, steps=200):
    return outputs(runner, model, "--run", "init", "--run", "train", "--steps", steps, "--feeds", data,
                   "--fetch", "w:0", "--fetch", "b", *args)


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_training_matches_the_session(runner, tmp_path, optimizer):
    # Elementwise ops and short sums round alike in numpy and C++, so the 200 steps agree
    # bit for bit, and so does the printed text.
    model, session_training = regression_model(tmp_path, optimizer)
    x, y = regression_data()
    np.savez(tmp_path / "data.npz", x=x, y=y)
    got = training_outputs(runner, model, tmp_path / "data.npz")
    expected = session_training({"x": x, "y": y}, 200)
    assert_same(got["w:0"], expected["w:0"])
    assert_same(got["b:0"], expected["b:0"])
    loss = np.mean((x @ got["w:0"] + got["b:0"] - y) ** 2)
    assert loss < 0.01 * np.mean(y ** 2)  # it did learn


def test_gradient_descent_matches_numpy_bit_for_bit(runner, tmp_path):
    model, _ = regression_model(tmp_path, "gradient_descent")
    x, y = regression_data()
    np.savez_compressed(tmp_path / "data.npz", x=x, y=y)  # deflated members
    got = training_outputs(runner, model, tmp_path / "data.npz")
    # The gradient graph's arithmetic in float32: d(mean)/d(pred) = 1/4 each; Square's
    # gradient 2 * (pred - y); the batch sums run in row order.
    f = np.float32
    w, b, lr = np.zeros(3, f), f(0), f(0.2)
    for _ in range(200):
        residual = (x * w).sum(axis=1) + b - y
        g = f(1) / f(len(y)) * (f(2) * residual)
        w, b = w - lr * (x * g[:, None]).sum(axis=0), b - lr * g.sum()
    assert_same(got["w:0"], w)
    assert_same(got["b:0"], b)


# The counter model's runs, steps and refusals are checked in both runners, byte for byte, by
# tests/cli/test_train.py; here only what graphrun-cc alone is asked.

def test_a_run_without_a_target_exits_2(runner, tmp_path):
    assert fails(runner, 2, counter_model(tmp_path), "--run") == "graphrun-cc: --run needs a value; see --help"


def test_errors_inside_a_run_exit_4(runner, tmp_path):
    model, _ = regression_model(tmp_path, "gradient_descent")
    x, y = regression_data()
    np.savez(tmp_path / "data.npz", x=x, y=y)
    line = fails(runner, 4, model, "--run", "train", "--feeds", tmp_path / "data.npz")
    assert line == "graphrun-cc: variable 'w' is not initialized; run its initializer first"
    assert fails(runner, 4, counter_model(tmp_path), "--run", "v") == (
        "graphrun-cc: variable 'v' is not initialized; run its initializer first")
    # Targets of the wrong length: the node that fails is named.
    np.savez(tmp_path / "bad.npz", x=x, y=y[:3])
    line = fails(runner, 4, model, "--run", "init", "--run", "train", "--feeds", tmp_path / "bad.npz")
    assert line.startswith("graphrun-cc: node 'sub' (Sub): cannot broadcast [4] with [3]")


def feeds_model(tmp_path):
    g = Graph()
    g.placeholder("x", np.float32, [-1])
    g.placeholder("layer/k", np.int64, [2])
    g.op("sum", "Sum", ["x", g.const("axis", 0, np.int32)], np.float32)
    g.op("k2", "Identity", ["layer/k"], np.int64)
    return g.save(tmp_path / "model.pb")


@pytest.mark.parametrize("save", [np.savez, np.savez_compressed])
def test_feeds_from_an_npz(runner, tmp_path, save):
    model = feeds_model(tmp_path)
    # int64 values into a float32 placeholder convert exactly; "layer/k" keeps its scope.
    save(tmp_path / "data.npz", x=np.array([1, 2, 2**24 + 1], np.int64), **{"layer/k": np.array([7, -8])})
    assert ok(runner, model, "--feeds", tmp_path / "data.npz") == (
        "sum:0 float32 [] = 16777220.0\nk2:0 int64 [2] = [7, -8]\n")


def test_feeds_from_several_archives_and_flags(runner, tmp_path):
    model = feeds_model(tmp_path)
    np.savez(tmp_path / "a.npz", **{"x:0": np.array([0.5], np.float32)})
    np.savez(tmp_path / "b.npz", **{"layer/k": np.array([1, 2])})
    assert ok(runner, model, "--feeds", tmp_path / "a.npz", "--feeds", tmp_path / "b.npz") == (
        "sum:0 float32 [] = 0.5\nk2:0 int64 [2] = [1, 2]\n")
    assert ok(runner, model, "--feeds", tmp_path / "a.npz", "--feed", "layer/k=[3,4]", "--fetch", "k2") == (
        "k2:0 int64 [2] = [3, 4]\n")


def save_npy_as(path, array):
    with open(path, "wb") as f:  # a file object: np.save adds no ".npy" to the name
        np.save(f, array)


def corrupt_member(path):
    """Flips a byte inside the first member's compressed data."""
    data = bytearray(path.read_bytes())
    name_length, extra_length = struct.unpack("<HH", data[26:30])
    data[30 + name_length + extra_length + 20] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("setup, message", [
    (lambda d: np.savez(d / "f.npz", x=np.ones(2, np.float32), **{"layer/k": np.ones(2, np.int64)},
                        extra=np.ones(1)),
     "--feeds {d}/f.npz: cannot feed 'extra': the graph has no node 'extra'; the graph's placeholders: "
     "x (float32, [?]), layer/k (int64, [2])"),
    (lambda d: np.savez(d / "f.npz", x=np.ones(2, np.float32), **{"x:0": np.ones(2, np.float32)}),
     "--feeds {d}/f.npz: 'x:0': placeholder 'x' is fed twice"),
    (lambda d: np.savez(d / "f.npz", x=np.array([0.5, 1.5])),
     None),  # fine on its own; fed twice with --feed below
    (lambda d: np.savez(d / "f.npz", **{"layer/k": np.array([1.5, 2.0])}),
     "--feeds {d}/f.npz: 'layer/k': 1.5 is not an integer, which placeholder 'layer/k' (int64) needs"),
    (lambda d: np.savez(d / "f.npz", **{"layer/k": np.array([1, 2, 3])}),
     "--feeds {d}/f.npz: 'layer/k': a value of shape [3] does not fit placeholder 'layer/k' (int64), whose shape "
     "is [2]"),
    (lambda d: save_npy_as(d / "f.npz", np.ones(2)),
     "--feeds {d}/f.npz: the file is a single .npy array; feed it with --feed NAME=@{d}/f.npz"),
    (lambda d: (d / "f.npz").write_bytes(b"not a zip archive at all"),
     "--feeds {d}/f.npz: cannot read the file as an .npz archive (Not a zip archive)"),
    (lambda d: None, "--feeds {d}/f.npz: no such file"),
])
def test_bad_feeds_archives_exit_2(runner, tmp_path, setup, message):
    model = feeds_model(tmp_path)
    setup(tmp_path)
    if message is None:
        line = fails(runner, 2, model, "--feed", "x=[1]", "--feeds", tmp_path / "f.npz")
        assert line == f"graphrun-cc: --feeds {tmp_path}/f.npz: 'x': placeholder 'x' is fed twice"
        return
    line = fails(runner, 2, model, "--feeds", tmp_path / "f.npz")
    assert line.startswith("graphrun-cc: " + message.format(d=tmp_path)), line


@pytest.mark.parametrize("save, problem", [(np.savez, "the member is damaged (its CRC-32 does not match)"),
                                           (np.savez_compressed, "Zlib error")])
def test_damaged_npz_members_are_refused(runner, tmp_path, save, problem):
    # A stored member's damage shows only in its CRC, which libzip checks at the member's end.
    save(tmp_path / "f.npz", x=np.arange(1000, dtype=np.float32))
    corrupt_member(tmp_path / "f.npz")
    line = fails(runner, 2, feeds_model(tmp_path), "--feeds", tmp_path / "f.npz")
    assert line.startswith(f"graphrun-cc: --feeds {tmp_path}/f.npz: 'x': {problem}")


def test_an_npz_member_that_is_not_an_array_is_refused(runner, tmp_path):
    import zipfile
    with zipfile.ZipFile(tmp_path / "f.npz", "w") as archive:
        archive.writestr("notes.txt", "hello")
    line = fails(runner, 2, feeds_model(tmp_path), "--feeds", tmp_path / "f.npz")
    assert line == (f"graphrun-cc: --feeds {tmp_path}/f.npz: cannot feed 'notes.txt': the graph has no node "
                    "'notes.txt'; the graph's placeholders: x (float32, [?]), layer/k (int64, [2])")


def test_text_and_json_layout(runner, tmp_path):
    g = Graph()
    g.const("Divide", 3.75, np.float64)
    g.const("y", [[1.0, 2.0], [3.0, 4.0]], np.float32)
    g.const("e", np.zeros((2, 0), np.int32))
    g.const("b", [True, False], np.bool_)
    model = g.save(tmp_path / "model.pb")
    assert ok(runner, model) == ("Divide:0 float64 [] = 3.75\n"
                                 "y:0 float32 [2,2] = [[1.0, 2.0], [3.0, 4.0]]\n"
                                 "e:0 int32 [2,0] = [[], []]\n"
                                 "b:0 bool [2] = [true, false]\n")
    assert ok(runner, model, "--json", "--fetch", "Divide", "--fetch", "y:0") == (
        '{"outputs": [{"name": "Divide:0", "dtype": "float64", "shape": [], "values": 3.75}, '
        '{"name": "y:0", "dtype": "float32", "shape": [2, 2], "values": [[1.0, 2.0], [3.0, 4.0]]}]}\n')
