"""graphrun run's new inputs and outputs: --feeds FILE.npz, --random/--seed/--shape, --out DIR."""

import json

import numpy as np
import pytest

import graphdef as tf
from graphdef.client.output_format import format_text, format_value
from graphdef.framework.random_feeds import random_value
from tests.support.graphrun_helpers import CNN, MLP, fails, graphrun, json_line, ok, save_model


def build_two_inputs():
    a = tf.placeholder(tf.float32, [None, 2], name="a")
    with tf.name_scope("layer"):
        k = tf.placeholder(tf.int32, [], name="k")
    tf.multiply(a, tf.cast(k, tf.float32), name="scaled")
    tf.identity(k, name="k_out")


@pytest.fixture
def two(tmp_path):
    return save_model(tmp_path / "two.pb", build_two_inputs)


# -- --feeds ------------------------------------------------------------------------------

def test_npz_feeds_several_placeholders(capsys, two, tmp_path):
    np.savez(tmp_path / "data.npz", a=np.array([[1.5, 2]], np.float64), **{"layer/k": np.array(3)})
    out = ok(capsys, two, "--feeds", tmp_path / "data.npz")
    assert out == "scaled:0 float32 [1,2] = [[4.5, 6.0]]\nk_out:0 int32 [] = 3\n"


def test_npz_and_feed_together(capsys, two, tmp_path):
    np.savez(tmp_path / "a.npz", a=np.zeros((2, 2), np.float32))
    out = ok(capsys, two, "--feeds", tmp_path / "a.npz", "--feed", "layer/k=7", "--fetch", "k_out")
    assert out == "k_out:0 int32 [] = 7\n"
    fails(capsys, 2, two, "--feed", "a=[[1,2]]", "--feeds", tmp_path / "a.npz", mentions=["a.npz", "twice"])


@pytest.mark.parametrize("arrays, mentions", [
    ({"nope": np.zeros(2)}, ["nope", "a (float32, [?,2])", "layer/k (int32, [])"]),
    ({"a": np.zeros((1, 3), np.float32)}, ["'a'", "[1,3]", "[?,2]"]),
    ({"layer/k": np.array(1.5)}, ["1.5", "int32"]),
    ({"a": np.array(["x"])}, ["'a'", "<U1"]),
])
def test_bad_npz_members(capsys, two, tmp_path, arrays, mentions):
    np.savez(tmp_path / "bad.npz", **arrays)
    fails(capsys, 2, two, "--feeds", tmp_path / "bad.npz", mentions=["--feeds", "bad.npz", *mentions])


def test_bad_npz_files(capsys, two, tmp_path):
    fails(capsys, 2, two, "--feeds", tmp_path / "absent.npz", mentions=["absent.npz", "no such file"])
    np.save(tmp_path / "single.npy", np.zeros(2))
    fails(capsys, 2, two, "--feeds", tmp_path / "single.npy", mentions=["--feed NAME=@"])
    (tmp_path / "junk.npz").write_bytes(b"PK\x03\x04 not really")
    fails(capsys, 2, two, "--feeds", tmp_path / "junk.npz", mentions=["junk.npz"])
    np.savez(tmp_path / "pickled.npz", a=np.array([{"x": 1}], dtype=object))
    fails(capsys, 2, two, "--feeds", tmp_path / "pickled.npz", mentions=["pickled.npz", "'a'"])


# -- --random -----------------------------------------------------------------------------

MASK = (1 << 64) - 1


def splitmix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def fnv1a(text):
    h = 0xCBF29CE484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001B3) & MASK
    return h


def words(seed, name, n):
    stream = splitmix(seed ^ fnv1a(name))
    return [splitmix((stream + (i + 1) * 0x9E3779B97F4A7C15) & MASK) for i in range(n)]


def test_random_values_follow_the_documented_generator():
    """The rule spelled out in plain integers, as the C++ runner will implement it."""
    w = words(7, "layer/x", 6)
    assert random_value(7, "layer/x", np.float32, (2, 3)).tolist() == \
        np.array([(x >> 40) * 2.0 ** -23 - 1 for x in w], np.float32).reshape(2, 3).tolist()
    assert random_value(7, "layer/x", np.float64, (6,)).tolist() == [(x >> 11) * 2.0 ** -52 - 1 for x in w]
    assert random_value(7, "layer/x", np.float16, (6,)).tolist() == \
        np.array([(x >> 53) * 2.0 ** -10 - 1 for x in w], np.float16).tolist()
    assert random_value(7, "layer/x", np.int64, (6,)).tolist() == [((x >> 32) * 10) >> 32 for x in w]
    assert random_value(7, "layer/x", np.uint8, (6,)).tolist() == [((x >> 32) * 10) >> 32 for x in w]
    assert random_value(7, "layer/x", np.bool_, (6,)).tolist() == [bool(x >> 63) for x in w]
    assert random_value(2 ** 64 - 1, "x", np.float32, ()).shape == ()


def test_random_value_ranges():
    floats = random_value(0, "x", np.float32, (100000,))
    assert floats.min() >= -1 and floats.max() < 1 and abs(float(floats.mean())) < 0.01
    ints = random_value(0, "x", np.int32, (100000,))
    assert set(np.unique(ints).tolist()) == set(range(10))
    assert 0.45 < random_value(0, "x", np.bool_, (100000,)).mean() < 0.55


def test_random_run_equals_feeding_the_same_values(capsys):
    out = ok(capsys, CNN, "--random", "--seed", "5", "--shape", "x=3,8,8,1")
    x = random_value(5, "x", np.float32, (3, 8, 8, 1))
    with tf.Session(graph=tf.load(CNN)) as sess:
        expected = sess.run("softmax/probs:0", {"x:0": x})
    assert out == format_text([("softmax/probs:0", expected)])
    assert ok(capsys, CNN, "--random", "--seed", "6", "--shape", "x=3,8,8,1") != out
    assert ok(capsys, CNN, "--random", "--shape", "x=3,8,8,1") == \
        ok(capsys, CNN, "--random", "--seed", "0", "--shape", "x=3,8,8,1")


def test_random_fills_only_what_is_not_fed(capsys, two):
    out = ok(capsys, two, "--random", "--feed", "layer/k=2", "--fetch", "k_out", "--fetch", "a", "--shape", "a=1,2")
    a = random_value(0, "a", np.float32, (1, 2))
    assert out == format_text([("k_out:0", np.int32(2)), ("a:0", a)])
    # an int placeholder of known shape needs no --shape; its values are in 0..9
    k = format_value(random_value(0, "layer/k", np.int32, ()))
    assert ok(capsys, two, "--random", "--fetch", "k_out") == f"k_out:0 int32 [] = {k}\n"


@pytest.mark.parametrize("argv, mentions", [
    (["--random"], ["x (float32, [?,16])", "--shape x=N,16"]),
    (["--shape", "x=4,16"], ["add --random"]),
    (["--random", "--shape", "x=4,15"], ["[4,15]", "[?,16]"]),
    (["--random", "--shape", "x=4"], ["[4]", "[?,16]"]),
    (["--random", "--shape", "x=a,b"], ["'a,b'"]),
    (["--random", "--shape", "x=-1,16"], ["x"]),
    (["--random", "--shape", "4,16"], ["NAME=D,D"]),
    (["--random", "--shape", "y=4,16"], ["'y'", "x (float32, [?,16])"]),
    (["--random", "--shape", "x=4,16", "--shape", "x:0=2,16"], ["twice"]),
    (["--random", "--feed", "x=[[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]]", "--shape", "x=4,16"], ["--feed", "--random"]),
    (["--random", "--seed", "-1"], ["--seed"]),
    (["--random", "--seed", "x"], ["--seed"]),
])
def test_random_errors(capsys, argv, mentions):
    fails(capsys, 2, MLP, *argv, mentions=mentions)


def test_unknown_rank_needs_a_shape(capsys, tmp_path):
    path = save_model(tmp_path / "any.pb", lambda: tf.identity(tf.placeholder(tf.float32, None, name="x"), name="y"))
    fails(capsys, 2, path, "--random", mentions=["unknown rank", "--shape x=D,D,..."])
    y = format_value(random_value(0, "x", np.float32, ()))
    assert ok(capsys, path, "--random", "--shape", "x=") == f"y:0 float32 [] = {y}\n"


def test_missing_feed_suggests_every_way_to_feed(capsys):
    fails(capsys, 2, MLP, mentions=["x (float32, [?,16])", "--feed", "--feeds", "--random"])


# -- --out --------------------------------------------------------------------------------

def test_out_writes_one_npy_per_output(capsys, two, tmp_path):
    out_dir = tmp_path / "results" / "run1"
    out = ok(capsys, two, "--feed", "a=[[1,2],[3,4]]", "--feed", "layer/k=2", "--fetch", "scaled",
             "--fetch", "layer/k:0", "--out", out_dir)
    assert out == (f"scaled:0 float32 [2,2] -> {out_dir / 'scaled_0.npy'}\n"
                   f"layer/k:0 int32 [] -> {out_dir / 'layer_k_0.npy'}\n")
    scaled = np.load(out_dir / "scaled_0.npy")
    assert scaled.dtype == np.float32 and scaled.tolist() == [[2, 4], [6, 8]]
    k = np.load(out_dir / "layer_k_0.npy")
    assert k.dtype == np.int32 and k.shape == () and k == 2
    assert sorted(p.name for p in out_dir.iterdir()) == ["layer_k_0.npy", "scaled_0.npy"]


def test_out_with_json(capsys, tmp_path):
    doc = json_line(ok(capsys, MLP, "--random", "--shape", "x=5,16", "--out", tmp_path, "--json"))
    assert doc == {"outputs": [{"name": "output/score:0", "dtype": "float32", "shape": [5, 1],
                                "file": str(tmp_path / "output_score_0.npy")}]}
    x = random_value(0, "x", np.float32, (5, 16))
    with tf.Session(graph=tf.load(MLP)) as sess:
        np.testing.assert_array_equal(np.load(tmp_path / "output_score_0.npy"), sess.run("output/score:0", {"x:0": x}))


def test_out_refuses_two_tensors_for_one_file(capsys, tmp_path):
    def build():
        with tf.name_scope("a"):
            tf.constant(1, name="b")
        tf.constant(2, name="a_b")
    path = save_model(tmp_path / "clash.pb", build)
    fails(capsys, 2, path, "--out", tmp_path / "o", mentions=["'a/b:0'", "'a_b:0'", "a_b_0.npy"])
    assert not (tmp_path / "o").exists()


def test_out_into_an_unwritable_place(capsys, two, tmp_path):
    (tmp_path / "file").write_text("")
    fails(capsys, 2, two, "--feed", "a=[[1,2]]", "--feed", "layer/k=1", "--out", tmp_path / "file" / "sub",
          mentions=["--out"])


def test_the_run_verb_is_explicit_too(capsys, two):
    argv = ["--feed", "a=[[1,2]]", "--feed", "layer/k=3", "--json"]
    assert ok(capsys, "run", two, *argv) == ok(capsys, two, *argv)
    assert json.loads(ok(capsys, "run", two, *argv))["outputs"][1]["values"] == 3
    code, out, err = graphrun(capsys, "run", "--help")
    assert code == 0 and out.startswith("usage: graphrun")
