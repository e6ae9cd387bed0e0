"""Checkpoints: Saver.save/restore round trips, the file format, atomic saves and restore errors.

Expected values are literals or numpy written here. The files are checked byte by byte where
the format fixes them (the data file is the tensors' raw bytes in key order), and TensorFlow
itself reads and writes them in tests/wire/test_tf_checkpoint.py. The older .npz checkpoints are
written here with numpy and zipfile, independently of graphdef's reader.
"""

import json
import os
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import graphdef as tf
from graphdef.wire import sstable
from graphdef.wire.checkpoint import (CheckpointError, Saver, checkpoint_exists, latest_checkpoint, list_variables,
                                      load_variable)
from graphdef.framework.errors import FailedPreconditionError

W = np.array([[1.5, -2.0, 0.25], [3.0, 0.0, -1.0]], np.float32)
B = np.array([7, -8], np.int64)


def build_model(w_init=W, b_init=B):
    """Two variables (one in a name scope) and an output that reads both: y = w^T x + b."""
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.name_scope("layer"):
        w = tf.Variable(w_init, name="w")
    b = tf.Variable(b_init, name="b")
    y = tf.add(tf.reduce_sum(w * tf.reshape(x, [2, 1]), axis=0), tf.cast(tf.reduce_sum(b), tf.float32), name="y")
    return x, w, b, y


def fresh(build=build_model, **kwargs):
    """A new graph built by `build`, a Session on it, and what `build` returned."""
    g = tf.Graph()
    with g.as_default():
        parts = build(**kwargs)
        saver = Saver()
        init = tf.global_variables_initializer()
    return g, tf.Session(graph=g), saver, init, parts


def y_of(w, b, x):
    """The model's output in numpy."""
    return (w * np.reshape(x, (2, 1))).sum(axis=0) + np.float32(b.sum())


def one_line(err):
    text = str(err)
    assert "\n" not in text, text
    return text


# -- round trips ------------------------------------------------------------------------------

def test_restore_in_the_same_session_brings_back_the_saved_values(tmp_path):
    g, sess, saver, init, (x, w, b, y) = fresh()
    sess.run(init)
    path = saver.save(sess, tmp_path / "model.ckpt")
    assert path == str(tmp_path / "model.ckpt") and os.path.isfile(path + ".index")
    w.load(np.zeros((2, 3), np.float32), sess)
    b.load([1, 1], sess)
    saver.restore(sess, path)
    np.testing.assert_array_equal(sess.run(w), W)
    np.testing.assert_array_equal(sess.run(b), B)
    assert sess.run(w).dtype == np.float32 and sess.run(b).dtype == np.int64


def test_restore_into_a_fresh_session_needs_no_initializer(tmp_path):
    g, sess, saver, init, (x, w, b, y) = fresh()
    sess.run(init)
    w.load(W * 2, sess)
    path = saver.save(sess, tmp_path / "model.ckpt")
    with tf.Session(graph=g) as other:
        saver.restore(other, path)
        np.testing.assert_array_equal(other.run(w), W * 2)
        np.testing.assert_array_equal(other.run(y, {x: [1.0, 2.0]}), y_of(W * 2, B, [1.0, 2.0]))


def test_restore_into_a_fresh_graph_built_the_same_way(tmp_path):
    _, sess, saver, init, (x, w, b, y) = fresh()
    sess.run(init)
    path = saver.save(sess, tmp_path / "model.ckpt")
    # the new graph starts from other values, and is never initialized
    _, sess2, saver2, _, (x2, w2, b2, y2) = fresh(w_init=np.ones((2, 3), np.float32), b_init=np.zeros(2, np.int64))
    saver2.restore(sess2, path)
    np.testing.assert_array_equal(sess2.run(w2), W)
    np.testing.assert_array_equal(sess2.run(y2, {x2: [0.5, -1.0]}), y_of(W, B, [0.5, -1.0]))


def test_restored_values_are_read_only_and_fetches_are_copies(tmp_path):
    g, sess, saver, init, (x, w, b, y) = fresh()
    sess.run(init)
    path = saver.save(sess, tmp_path / "model.ckpt")
    saver.restore(sess, path)
    assert not sess._variables["layer/w"].flags.writeable
    fetched = sess.run(w)
    fetched[0, 0] = 100.0
    np.testing.assert_array_equal(sess.run(w), W)


@pytest.mark.parametrize("value", [
    np.array(2.5, np.float64), np.array([True, False]), np.arange(6, dtype=np.uint8).reshape(3, 2),
    np.array([1.0, -0.5], np.float16), np.zeros((0, 3), np.float32), np.array(-(2 ** 40), np.int64),
    np.array([65535], np.uint16),
], ids=lambda v: f"{v.dtype}{list(v.shape)}")
def test_every_dtype_and_shape_round_trips_exactly(tmp_path, value):
    def build():
        return tf.Variable(value, name="v")
    _, sess, saver, init, v = fresh(build)
    sess.run(init)
    path = saver.save(sess, tmp_path / "c")
    _, sess2, saver2, _, v2 = fresh(build)
    saver2.restore(sess2, path)
    got = sess2.run(v2)
    assert np.asarray(got).dtype == value.dtype and np.shape(got) == value.shape
    np.testing.assert_array_equal(got, value)


# -- the file format ----------------------------------------------------------------------------

LEVELDB_MAGIC = (0xdb4775248b80fb57).to_bytes(8, "little")


def files_of(prefix):
    return [f"{prefix}.index", f"{prefix}.data-00000-of-00001"]


def contents(prefix):
    return [open(f, "rb").read() for f in files_of(prefix)]


def test_the_files_are_tensorflows_bundle(tmp_path):
    _, sess, saver, init, _ = fresh()
    sess.run(init)
    path = saver.save(sess, tmp_path / "model.ckpt", global_step=3)
    assert path == str(tmp_path / "model.ckpt-3")
    index, data = contents(path)
    # The data file is every tensor's little-endian bytes, one after another, in key order.
    assert data == B.astype("<i8").tobytes() + W.astype("<f4").tobytes()
    assert index.endswith(LEVELDB_MAGIC) and b"layer/w" in index
    assert list_variables(path) == [("b", [2]), ("layer/w", [2, 3])]
    np.testing.assert_array_equal(load_variable(path, "layer/w"), W)


def test_an_older_npz_checkpoint_still_restores(tmp_path):
    path = tmp_path / "old.ckpt"
    write_zip(path, {"__checkpoint__.json": META, "layer/w.npy": npy_bytes(W), "b.npy": npy_bytes(B)})
    _, sess, saver, _, (x, w, b, y) = fresh()
    saver.restore(sess, path)
    np.testing.assert_array_equal(sess.run(w), W)
    assert list_variables(path) == [("b", [2]), ("layer/w", [2, 3])]


def test_saving_the_same_values_twice_gives_the_same_bytes(tmp_path):
    _, sess, saver, init, _ = fresh()
    sess.run(init)
    assert contents(saver.save(sess, tmp_path / "a")) == contents(saver.save(sess, tmp_path / "b"))


def test_new_files_get_the_usual_permissions(tmp_path):
    _, sess, saver, init, _ = fresh()
    sess.run(init)
    umask = os.umask(0o022)
    try:
        path = saver.save(sess, tmp_path / "model.ckpt")
    finally:
        os.umask(umask)
    assert [os.stat(f).st_mode & 0o777 for f in files_of(path)] == [0o644, 0o644]


# -- var_list, global_step, latest_checkpoint ---------------------------------------------------

def test_var_list_as_a_list_saves_only_those_variables(tmp_path):
    g, sess, _, init, (x, w, b, y) = fresh()
    sess.run(init)
    path = Saver([b]).save(sess, tmp_path / "only_b")
    assert list_variables(path) == [("b", [2])]


def test_var_list_as_a_dict_saves_under_the_given_keys_and_restores_by_them(tmp_path):
    g, sess, _, init, (x, w, b, y) = fresh()
    sess.run(init)
    path = Saver({"weights": w, "bias": b}).save(sess, tmp_path / "renamed")
    assert list_variables(path) == [("bias", [2]), ("weights", [2, 3])]

    g2 = tf.Graph()
    with g2.as_default():
        other = tf.Variable(np.zeros((2, 3), np.float32), name="dense/kernel")
        saver = Saver({"weights": other})
    with tf.Session(graph=g2) as sess2:
        saver.restore(sess2, path)  # "bias" is in the file but not asked for: ignored
        np.testing.assert_array_equal(sess2.run(other), W)


def test_global_step_names_the_file_as_tf1_does(tmp_path):
    g, sess, saver, init, (x, w, b, y) = fresh()
    with g.as_default():
        step = tf.Variable(np.int64(0), name="global_step", trainable=False)
        incr = step.assign_add(np.int64(5))
    sess.run(init)
    sess.run(step.initializer)
    sess.run(incr)
    assert saver.save(sess, tmp_path / "m", global_step=7) == str(tmp_path / "m-7")
    assert saver.save(sess, tmp_path / "m", global_step=np.int32(8)) == str(tmp_path / "m-8")
    assert saver.save(sess, tmp_path / "m", global_step=step) == str(tmp_path / "m-5")
    with pytest.raises(TypeError, match="global_step must be an integer"):
        saver.save(sess, tmp_path / "m", global_step=1.5)


def test_latest_checkpoint_follows_the_state_file_and_max_to_keep_deletes_the_oldest(tmp_path):
    _, sess, _, init, (x, w, b, y) = fresh()
    sess.run(init)
    assert latest_checkpoint(tmp_path) is None
    saver = Saver([w, b], max_to_keep=2)
    for step in (1, 2, 3):
        w.load(W + step, sess)
        saver.save(sess, tmp_path / "model.ckpt", global_step=step)
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.ckpt-2.data-00000-of-00001", "model.ckpt-2.index",
                                            "model.ckpt-2.meta", "model.ckpt-3.data-00000-of-00001",
                                            "model.ckpt-3.index", "model.ckpt-3.meta"]
    assert (tmp_path / "checkpoint").read_text() == (
        'model_checkpoint_path: "model.ckpt-3"\n'
        'all_model_checkpoint_paths: "model.ckpt-2"\n'
        'all_model_checkpoint_paths: "model.ckpt-3"\n')
    latest = latest_checkpoint(str(tmp_path))
    assert latest == str(tmp_path / "model.ckpt-3")
    assert saver.last_checkpoints == [str(tmp_path / "model.ckpt-2"), latest]
    saver.restore(sess, latest)
    np.testing.assert_array_equal(sess.run(w), W + 3)


def test_a_checkpoint_cannot_take_the_state_files_name(tmp_path):
    _, sess, saver, init, _ = fresh()
    sess.run(init)
    with pytest.raises(ValueError, match="'checkpoint' is the file that records the latest checkpoint"):
        saver.save(sess, tmp_path / "checkpoint")
    assert saver.save(sess, tmp_path / "checkpoint", write_state=False) == str(tmp_path / "checkpoint")


def test_checkpoint_exists_tells_a_checkpoint_from_anything_else(tmp_path):
    _, sess, saver, init, _ = fresh()
    sess.run(init)
    (tmp_path / "other").write_bytes(b"hello")
    assert checkpoint_exists(saver.save(sess, tmp_path / "c"))
    assert not checkpoint_exists(tmp_path / "other")
    assert not checkpoint_exists(tmp_path / "missing")


# -- atomic saves ---------------------------------------------------------------------------------

def saved_twice_with_a_failing_write(tmp_path, monkeypatch, fail):
    """Saves good values, then tries to save new values while `fail` breaks the write; returns
    (the checkpoint path, its bytes before the second save, the session, w)."""
    _, sess, saver, init, (x, w, b, y) = fresh()
    sess.run(init)
    path = saver.save(sess, tmp_path / "model.ckpt")
    before = contents(path)
    w.load(np.full((2, 3), 9.0, np.float32), sess)
    fail(monkeypatch)
    with pytest.raises(OSError, match="disk full"):
        saver.save(sess, path)
    monkeypatch.undo()
    return path, before, saver


def fail_on_the_index(monkeypatch):
    """The new data file is written and synced; writing the index fails."""
    real = sstable.build

    def build(items):
        raise OSError("disk full")
    monkeypatch.setattr(sstable, "build", build)
    del real


def fail_on_the_first_rename(monkeypatch):
    """Both new files are written and synced; renaming the first into place fails."""
    def replace(src, dst):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", replace)


@pytest.mark.parametrize("fail", [fail_on_the_index, fail_on_the_first_rename])
def test_a_failed_save_leaves_the_previous_checkpoint_and_no_temporary_file(tmp_path, monkeypatch, fail):
    path, before, saver = saved_twice_with_a_failing_write(tmp_path, monkeypatch, fail)
    assert contents(path) == before
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.ckpt.data-00000-of-00001", "model.ckpt.index",
                                            "model.ckpt.meta"]
    _, sess2, saver2, _, (x, w, b, y) = fresh()
    saver2.restore(sess2, path)
    np.testing.assert_array_equal(sess2.run(w), W)


def test_a_process_killed_mid_save_leaves_the_previous_checkpoint_intact(tmp_path):
    """A real crash: the saving process dies (no cleanup runs) after writing part of the new file."""
    _, sess, saver, init, (x, w, b, y) = fresh()
    sess.run(init)
    path = saver.save(sess, tmp_path / "model.ckpt")
    before = contents(path)
    script = textwrap.dedent(f"""
        import os
        import numpy as np
        import graphdef as tf
        from graphdef.wire import sstable
        from graphdef.wire.checkpoint import Saver
        def build(items):
            os._exit(17)  # dies the way a killed process does, data staged: no except, no finally
        sstable.build = build
        with tf.Graph().as_default() as g:
            w = tf.Variable(np.full((400, 400), 5.0, np.float32), name="layer/w")
            b = tf.Variable(np.zeros(2, np.int64), name="b")
            saver = Saver()
            sess = tf.Session(graph=g)
            sess.run(tf.global_variables_initializer())
        saver.save(sess, {str(path)!r})
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 17, proc.stderr
    assert contents(path) == before
    leftovers = [n for n in os.listdir(tmp_path) if n not in [os.path.basename(f) for f in files_of(path)]
                 and n not in ("checkpoint", "model.ckpt.meta")]
    assert all(n.startswith(".model.ckpt.") and n.endswith(".tmp") for n in leftovers), leftovers
    _, sess2, saver2, _, (x, w2, b2, y) = fresh()
    saver2.restore(sess2, path)
    np.testing.assert_array_equal(sess2.run(w2), W)


# -- restore errors -------------------------------------------------------------------------------

def test_restore_names_every_missing_or_mismatched_variable_and_changes_nothing(tmp_path):
    g1 = tf.Graph()
    with g1.as_default():
        with tf.name_scope("layer"):
            tf.Variable(W, name="w")
        tf.Variable(B, name="b")
        tf.Variable(np.float32(4.0), name="ok")
        saver = Saver()
        init = tf.global_variables_initializer()
    with tf.Session(graph=g1) as sess:
        sess.run(init)
        path = saver.save(sess, tmp_path / "model.ckpt")

    g2 = tf.Graph()
    with g2.as_default():
        with tf.name_scope("layer"):
            w = tf.Variable(np.zeros((3, 3), np.float32), name="w")   # shape differs
        b = tf.Variable(np.zeros(2, np.int32), name="b")              # dtype differs
        ok = tf.Variable(np.float32(0.0), name="ok")                  # matches: would be restored
        c = tf.Variable(np.float64(1.0), name="c")                    # not in the file
        d = tf.Variable(np.zeros(2, np.int64), name="d")              # its key is not in the file
        saver2 = Saver({"layer/w": w, "b": b, "ok": ok, "c": c, "renamed": d})
        init2 = tf.global_variables_initializer()
    with tf.Session(graph=g2) as sess2:
        sess2.run(init2)
        with pytest.raises(CheckpointError) as info:
            saver2.restore(sess2, path)
        assert sess2.run(ok) == 0.0
        np.testing.assert_array_equal(sess2.run(w), np.zeros((3, 3)))
        np.testing.assert_array_equal(sess2.run(b), [0, 0])
    assert str(info.value).splitlines() == [
        f"Saver.restore: {path} does not match the graph in 4 variables; nothing was restored:",
        "  'layer/w': expected float32 [3,3], found float32 [2,3]",
        "  'b': expected int32 [2], found int64 [2]",
        "  'c': expected float64 [], not in the checkpoint",
        "  'renamed' (variable 'd'): expected int64 [2], not in the checkpoint",
        "(the checkpoint holds 'b', 'layer/w', 'ok')",
    ]
    assert isinstance(info.value, ValueError)


def test_restore_of_a_good_subset_after_a_failed_one_still_works(tmp_path):
    _, sess, saver, init, (x, w, b, y) = fresh()
    sess.run(init)
    path = saver.save(sess, tmp_path / "model.ckpt")
    _, sess2, _, _, (x2, w2, b2, y2) = fresh(b_init=np.zeros(3, np.int64))
    with pytest.raises(CheckpointError, match=r"'b': expected int64 \[3\], found int64 \[2\]"):
        Saver([w2, b2]).restore(sess2, path)
    assert sess2._variables == {}  # not even the matching w was set
    Saver([w2]).restore(sess2, path)
    np.testing.assert_array_equal(sess2.run(w2), W)


def write_zip(path, entries):
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)


META = json.dumps({"format": "graphdef-checkpoint", "version": 1, "global_step": None})


def npy_bytes(array, allow_pickle=False):
    import io
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def not_checkpoints(tmp_path):
    """(file, words the one-line error must contain) for files that are no checkpoint."""
    graph_file = tmp_path / "model.pb"
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0, name="c")
    tf.save(g, graph_file)
    (tmp_path / "text").write_text("hello\n")
    np.savez(tmp_path / "plain.npz", w=W)
    write_zip(tmp_path / "other_format", {"__checkpoint__.json": json.dumps({"format": "something-else"})})
    write_zip(tmp_path / "newer", {"__checkpoint__.json": json.dumps({"format": "graphdef-checkpoint",
                                                                       "version": 2})})
    write_zip(tmp_path / "bad_meta", {"__checkpoint__.json": "{not json"})
    return [
        (tmp_path / "missing", "no such checkpoint (neither"),
        (tmp_path, "is a directory"),
        (tmp_path / "text", "not a graphdef checkpoint (not an .npz/zip archive)"),
        (graph_file, "not a graphdef checkpoint (not an .npz/zip archive)"),
        (tmp_path / "plain.npz", "not a graphdef checkpoint (a zip archive without __checkpoint__.json)"),
        (tmp_path / "other_format", 'does not say "format": "graphdef-checkpoint"'),
        (tmp_path / "newer", "checkpoint format version 2; this graphdef reads version 1"),
        (tmp_path / "bad_meta", "unreadable __checkpoint__.json"),
    ]


def test_a_missing_file_or_a_file_that_is_no_checkpoint_is_one_clear_line(tmp_path):
    _, sess, saver, _, _ = fresh()
    for path, words in not_checkpoints(tmp_path):
        with pytest.raises(CheckpointError) as info:
            saver.restore(sess, path)
        text = one_line(info.value)
        assert text.startswith(f"{path}: ") and words in text, text
    assert sess._variables == {}


def test_a_truncated_checkpoint_is_one_clear_line(tmp_path):
    _, sess, saver, init, _ = fresh()
    sess.run(init)
    path = saver.save(sess, tmp_path / "model.ckpt")
    index, data = files_of(path)
    original = open(index, "rb").read()
    open(index, "wb").write(original[: len(original) // 2])
    with pytest.raises(CheckpointError) as info:
        saver.restore(sess, path)
    assert one_line(info.value).startswith(f"{index}: ") and "magic" in one_line(info.value)
    open(index, "wb").write(original)
    open(data, "r+b").truncate(10)
    with pytest.raises(CheckpointError) as info:
        saver.restore(sess, path)
    assert f"found an entry that is unreadable ({data}: tensor 'layer/w': bytes 16..40 lie past the file's end " \
           "(10 bytes))" in str(info.value)


def test_a_pickled_entry_is_refused_and_never_unpickled(tmp_path):
    marker = tmp_path / "unpickled"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))
    evil = np.empty(2, dtype=object)
    evil[0] = Payload()
    path = tmp_path / "evil"
    write_zip(path, {"__checkpoint__.json": META, "layer/w.npy": npy_bytes(evil, allow_pickle=True),
                     "b.npy": npy_bytes(B)})
    _, sess, saver, _, _ = fresh()
    with pytest.raises(CheckpointError) as info:
        saver.restore(sess, path)
    assert "'layer/w': expected float32 [2,3], found an entry that is unreadable" in str(info.value)
    assert not marker.exists() and sess._variables == {}


def test_restore_without_a_path_says_latest_checkpoint_found_none(tmp_path):
    _, sess, saver, _, _ = fresh()
    with pytest.raises(CheckpointError, match="save_path is None"):
        saver.restore(sess, latest_checkpoint(tmp_path))


# -- save errors ----------------------------------------------------------------------------------

def test_save_lists_every_uninitialized_variable(tmp_path):
    _, sess, saver, _, _ = fresh()
    with pytest.raises(FailedPreconditionError, match=r"variables 'b', 'layer/w' are not initialized"):
        saver.save(sess, tmp_path / "model.ckpt")
    assert os.listdir(tmp_path) == []


def test_a_saver_needs_variables_of_the_sessions_graph(tmp_path):
    g = tf.Graph()
    with g.as_default():
        with pytest.raises(ValueError, match="no variables to save"):
            Saver()
        v = tf.Variable(1.0, name="v")
        with pytest.raises(ValueError, match="cannot name a variable"):
            Saver({"__checkpoint__": v})
        with pytest.raises(TypeError, match="is not a variable"):
            Saver([tf.constant(1.0)])
    _, other_sess, _, _, _ = fresh()
    with pytest.raises(ValueError, match="belong to another graph"):
        Saver([v]).save(other_sess, tmp_path / "x")
