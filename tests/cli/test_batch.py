"""graphrun batch (memory-mapped streaming into an .npy) and graphdef.Runner (load once, pickle by path)."""

import concurrent.futures
import multiprocessing
import pickle

import numpy as np
import pytest

import graphdef as tf
from graphdef.graphrun import npy_stream
from graphdef.client.runner_api import Runner
from tests.support.graphrun_helpers import MLP, fails, ok, save_model
from tests.support.numerics_policy import assert_conforms


def session_result(model, fetch, feeds):
    with tf.Session(graph=tf.load(model)) as sess:
        return sess.run(fetch, feeds)


@pytest.fixture
def rows(tmp_path):
    x = np.random.default_rng(0).standard_normal((3001, 16)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    return x


def test_batch_equals_one_session_run(capsys, tmp_path, rows, monkeypatch):
    monkeypatch.setattr(npy_stream, "RELEASE_BYTES", 4096)   # release pages every few batches
    out = ok(capsys, "batch", MLP, "--input", f"x={tmp_path / 'x.npy'}", "--output", tmp_path / "s.npy",
             "--batch-size", "256")
    assert out.startswith(f"{tmp_path / 's.npy'}: output/score:0 float32 [3001,1], 3001 rows in ")
    scores = np.load(tmp_path / "s.npy")
    assert scores.dtype == np.float32 and scores.shape == (3001, 1)
    # BLAS may pick other kernels for 256 rows than for 3001, so equal within the MLP's policy
    assert_conforms(scores, session_result(MLP, "output/score:0", {"x:0": rows}), MLP, "output/score:0")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.npy", "x.npy"]   # no partial file left


def build_two_inputs():
    a = tf.placeholder(tf.float32, [None, 3], name="a")
    b = tf.placeholder(tf.int32, [None], name="b")
    scale = tf.placeholder(tf.float32, [], name="scale")
    tf.multiply(tf.reduce_sum(a, axis=1) + tf.cast(b, tf.float32), scale, name="y")


def test_several_inputs_a_constant_feed_and_conversion(capsys, tmp_path):
    path = save_model(tmp_path / "two.pb", build_two_inputs)
    a = np.arange(30, dtype=np.float64).reshape(10, 3)      # float64 rows into a float32 placeholder
    b = np.arange(10, dtype=np.int64)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    ok(capsys, "batch", path, "--input", f"a={tmp_path / 'a.npy'}", "--input", f"b={tmp_path / 'b.npy'}",
       "--feed", "scale=0.5", "--output", tmp_path / "y.npy", "--batch-size", "3", "--quiet")
    expected = (a.sum(axis=1) + b) * 0.5
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), expected.astype(np.float32))


def test_an_empty_dataset(capsys, tmp_path):
    np.save(tmp_path / "none.npy", np.zeros((0, 16), np.float32))
    assert ok(capsys, "batch", MLP, "--input", f"x={tmp_path / 'none.npy'}", "--output", tmp_path / "o.npy",
              "--quiet") == ""
    out = np.load(tmp_path / "o.npy")
    assert out.shape == (0, 1) and out.dtype == np.float32


def test_errors(capsys, tmp_path, rows):
    x = f"x={tmp_path / 'x.npy'}"
    out = tmp_path / "o.npy"
    np.save(tmp_path / "wide.npy", np.zeros((4, 15), np.float32))
    np.save(tmp_path / "text.npy", np.array(["a"]))
    np.save(tmp_path / "scalar.npy", np.float32(1))
    np.save(tmp_path / "huge.npy", np.full((2, 16), 1e300))
    fails(capsys, 2, "batch", MLP, "--input", f"x={tmp_path / 'wide.npy'}", "--output", out,
          mentions=["[15]", "[4,15]", "[?,16]"])
    fails(capsys, 2, "batch", MLP, "--input", f"x={tmp_path / 'text.npy'}", "--output", out, mentions=["<U1"])
    fails(capsys, 2, "batch", MLP, "--input", f"x={tmp_path / 'scalar.npy'}", "--output", out, mentions=["scalar"])
    fails(capsys, 2, "batch", MLP, "--input", f"x={tmp_path / 'absent.npy'}", "--output", out, mentions=["absent.npy"])
    fails(capsys, 2, "batch", MLP, "--input", f"nope={tmp_path / 'x.npy'}", "--output", out,
          mentions=["nope", "x (float32, [?,16])"])
    fails(capsys, 2, "batch", MLP, "--input", "x", "--output", out, mentions=["NAME=FILE.npy"])
    fails(capsys, 2, "batch", MLP, "--output", out, mentions=["--input"])
    fails(capsys, 2, "batch", MLP, "--input", x, "--output", out, "--batch-size", "0", mentions=["--batch-size"])
    fails(capsys, 2, "batch", MLP, "--input", f"x={tmp_path / 'huge.npy'}", "--output", out,
          mentions=["out of range", "float32"])
    assert not out.exists()


def test_outputs_must_have_one_row_per_input_row(capsys, tmp_path, rows):
    def build():
        x = tf.placeholder(tf.float32, [None, 16], name="x")
        tf.reduce_sum(x, name="total")
        tf.identity(x, name="same")
    path = save_model(tmp_path / "m.pb", build)
    x = f"x={tmp_path / 'x.npy'}"
    fails(capsys, 2, "batch", path, "--input", x, "--output", tmp_path / "o.npy",
          mentions=["total:0, same:0", "--fetch"])
    fails(capsys, 2, "batch", path, "--input", x, "--output", tmp_path / "o.npy", "--fetch", "total",
          mentions=["'total:0'", "[]", "one output row per input row"])
    ok(capsys, "batch", path, "--input", x, "--output", tmp_path / "o.npy", "--fetch", "same", "--quiet")
    np.testing.assert_array_equal(np.load(tmp_path / "o.npy"), rows)


def test_inputs_must_agree_in_rows_and_needed_feeds_must_be_given(capsys, tmp_path):
    path = save_model(tmp_path / "two.pb", build_two_inputs)
    np.save(tmp_path / "a.npy", np.zeros((5, 3), np.float32))
    np.save(tmp_path / "b.npy", np.zeros(4, np.int32))
    a, b = f"a={tmp_path / 'a.npy'}", f"b={tmp_path / 'b.npy'}"
    fails(capsys, 2, "batch", path, "--input", a, "--input", b, "--feed", "scale=1", "--output", tmp_path / "y.npy",
          mentions=["a 5", "b 4"])
    np.save(tmp_path / "b.npy", np.zeros(5, np.int32))
    fails(capsys, 2, "batch", path, "--input", a, "--input", b, "--output", tmp_path / "y.npy",
          mentions=["scale (float32, [])"])


def test_a_kernel_failure_names_the_rows(capsys, tmp_path):
    def build():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        tf.reshape(x, [-1, 3], name="r")
    path = save_model(tmp_path / "r.pb", build)
    np.save(tmp_path / "x.npy", np.zeros((6, 4), np.float32))
    fails(capsys, 4, "batch", path, "--input", f"x={tmp_path / 'x.npy'}", "--output", tmp_path / "o.npy",
          "--batch-size", "4", mentions=["rows 0..3", "'r'"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.pb", "x.npy"]


def test_npy_map_release_keeps_the_data(tmp_path, monkeypatch):
    monkeypatch.setattr(npy_stream, "RELEASE_BYTES", 4096)
    data = np.arange(100000, dtype=np.int64).reshape(-1, 10)
    np.save(tmp_path / "d.npy", data)
    out = npy_stream.NpyWriter(tmp_path / "c.npy", np.int64, data.shape)
    with npy_stream.NpyMap(tmp_path / "d.npy") as mapped:
        for start in range(0, len(data), 700):
            out.write(mapped.array[start:start + 700] * 2)
            mapped.done_with_rows(start + 700)
        np.testing.assert_array_equal(mapped.array[:5], data[:5])   # released pages read back from the file
    out.close()
    np.testing.assert_array_equal(np.load(tmp_path / "c.npy"), data * 2)


def test_npy_writer_refuses_what_does_not_continue_the_array(tmp_path):
    out = npy_stream.NpyWriter(tmp_path / "w.npy", np.float32, (3, 2))
    for rows in (np.zeros((1, 2), np.float64), np.zeros((1, 3), np.float32), np.zeros((4, 2), np.float32)):
        with pytest.raises(npy_stream.NpyError, match="do not continue"):
            out.write(rows)
    out.write(np.ones((2, 2), np.float32).T[:, :2])                 # any layout; written row-major
    with pytest.raises(npy_stream.NpyError, match="1 rows of 3 were never written"):
        out.close()
    fortran = np.asfortranarray(np.arange(6, dtype=np.int16).reshape(2, 3))
    np.save(tmp_path / "f.npy", fortran)
    with npy_stream.NpyMap(tmp_path / "f.npy") as mapped:
        assert mapped.array.tolist() == fortran.tolist()
    (tmp_path / "short.npy").write_bytes((tmp_path / "f.npy").read_bytes()[:-2])
    with pytest.raises(npy_stream.NpyError, match="header promises"):
        npy_stream.NpyMap(tmp_path / "short.npy")


def test_an_output_whose_rows_change_shape_between_batches(capsys, tmp_path):
    def build():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        tf.matmul(x, tf.transpose(x), name="gram")              # [rows, rows]: its row shape follows the batch
    path = save_model(tmp_path / "gram.pb", build)
    np.save(tmp_path / "x.npy", np.ones((5, 2), np.float32))
    fails(capsys, 4, "batch", path, "--input", f"x={tmp_path / 'x.npy'}", "--output", tmp_path / "g.npy",
          "--batch-size", "2", mentions=["rows 4..4", "float32 [1,1]", "float32 [2]"])
    assert not (tmp_path / "g.npy").exists()


# -- graphdef.Runner ----------------------------------------------------------------------

def test_runner_runs_arrays_and_dicts(rows):
    runner = Runner(MLP)
    expected = session_result(MLP, "output/score:0", {"x:0": rows[:10]})
    np.testing.assert_array_equal(runner(rows[:10]), expected)
    np.testing.assert_array_equal(runner({"x": rows[:10]}), expected)     # one output: the array itself
    np.testing.assert_array_equal(runner({"x:0": rows[:10]}), expected)
    assert list(runner.run({"x": rows[:10]})) == ["output/score:0"]
    assert runner.inputs == {"x": ("float32", [None, 16])} and runner.outputs == ["output/score:0"]
    relu = runner.run(rows[:2], fetches=["dense1/Relu"])["dense1/Relu:0"]
    assert relu.shape == (2, 32) and (relu >= 0).all()
    assert repr(runner) == f"<graphdef.Runner {str(MLP)!r} inputs: x (float32, [?,16]); outputs: output/score:0>"


def test_runner_errors(tmp_path, rows):
    runner = Runner(MLP)
    with pytest.raises(ValueError, match=r"'nope'.*x \(float32, \[\?,16\]\)"):
        runner({"nope": rows[:2]})
    with pytest.raises(ValueError, match=r"\[2,15\].*\[\?,16\]"):
        runner(rows[:2, :15])
    two = Runner(save_model(tmp_path / "two.pb", build_two_inputs))
    with pytest.raises(ValueError,
                       match=r"a \(float32, \[\?,3\]\), b \(int32, \[\?\]\), scale \(float32, \[\]\).*dict"):
        two(np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"b \(int32, \[\?\]\), scale \(float32, \[\]\) not fed"):
        two({"a": np.zeros((2, 3))})
    assert two({"a": np.ones((2, 3)), "b": [1, 2], "scale": 2}).tolist() == [8.0, 10.0]
    with pytest.raises(ValueError, match="no node 'ghost'"):
        Runner(MLP, fetches="ghost")
    with pytest.raises(tf.wire.serialize.GraphFileError, match="absent.pb"):
        Runner(tmp_path / "absent.pb")


def test_runner_init_runs_the_initializer(tmp_path):
    def build():
        v = tf.Variable([1.0, 2.0], name="v")
        tf.multiply(v, tf.placeholder(tf.float32, [], name="k"), name="out")
        tf.global_variables_initializer()
    runner = Runner(save_model(tmp_path / "var.pb", build), fetches="out", init="init")
    assert runner(3).tolist() == [3.0, 6.0]


def test_runner_pickles_by_path_and_loads_once_per_process(rows):
    runner = Runner(MLP)
    data = pickle.dumps(runner)
    assert len(data) < 500 and b"MatMul" not in data          # the path, not the graph
    first, second = pickle.loads(data), pickle.loads(data)
    assert first is second and first is not runner
    np.testing.assert_array_equal(first(rows[:5]), runner(rows[:5]))


def test_runner_in_other_processes(rows):
    runner = Runner(MLP)
    chunks = np.array_split(rows[:400], 4)
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        results = list(pool.map(runner, chunks))
    assert_conforms(np.concatenate(results), runner(rows[:400]), MLP, "output/score:0")


def test_runner_from_threads(rows):
    runner = Runner(MLP)
    chunks = np.array_split(rows, 16)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(runner, chunks))
    assert_conforms(np.concatenate(results), runner(rows), MLP, "output/score:0")
