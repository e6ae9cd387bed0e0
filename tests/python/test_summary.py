"""graphdef.summary: event files TensorBoard's own reader accepts, with our graph and our training curves.

Everything written here is read back with tensorboard's EventAccumulator and
EventFileLoader (what `tensorboard --logdir` uses), never with code of ours.
"""

import numpy as np
import pytest

pytest.importorskip("tensorboard", reason="tensorboard is not installed; `make test` installs it")

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader  # noqa: E402
from tensorboard.compat.proto import summary_pb2  # noqa: E402

import graphdef as tf  # noqa: E402
from graphdef import summary  # noqa: E402
from graphdef.framework.errors import InvalidArgumentError  # noqa: E402
from graphdef.wire.serialize import serialize  # noqa: E402

F32 = np.float32


def read(logdir):
    events = EventAccumulator(str(logdir))
    events.Reload()
    return events


def event_files(logdir):
    return sorted(p for p in logdir.iterdir() if "tfevents" in p.name)


def regression(graph):
    """A small training graph with scalar summaries, in `graph`."""
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        w = tf.Variable(np.zeros((2, 1), F32), name="w")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y), name="loss")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.name_scope("metrics"):
            summary.scalar("loss", loss)
            summary.scalar("w0", tf.reduce_sum(w[0]))
        merged = summary.merge_all()
        init = tf.global_variables_initializer()
    data = {x: np.array([[1, 0], [0, 1], [1, 1]], F32), y: np.array([[1], [-1], [0]], F32)}
    return loss, train, merged, init, data


def test_the_graph_event_holds_our_graph_def_with_output_shapes(tmp_path):
    graph = tf.Graph()
    regression(graph)
    writer = summary.FileWriter(tmp_path, graph)
    writer.close()
    events = read(tmp_path)
    assert events.Tags()["graph"] is True
    written = events.Graph()
    assert serialize(graph.as_graph_def(add_shapes=True)) == written.SerializeToString(deterministic=True)
    nodes = {node.name: node for node in written.node}
    assert nodes["loss"].op == "Mean" and nodes["x"].op == "Placeholder"
    shapes = nodes["MatMul"].attr["_output_shapes"].list.shape[0]
    assert [d.size for d in shapes.dim] == [-1, 1], "the viewer's edge shapes (_output_shapes) are missing"


def test_the_file_is_a_tensorboard_event_file(tmp_path):
    with summary.FileWriter(tmp_path / "run") as writer:
        path = writer.path
    (only,) = event_files(tmp_path / "run")
    assert str(only) == path and only.name.startswith("events.out.tfevents.")
    first = next(iter(EventFileLoader(str(only)).Load()))
    assert first.file_version == "brain.Event:2"


def test_training_curves_read_back_step_by_step(tmp_path):
    graph = tf.Graph()
    loss, train, merged, init, data = regression(graph)
    losses = {}
    with tf.Session(graph=graph) as sess:
        writer = summary.FileWriter(tmp_path, sess.graph)
        sess.run(init)
        for step in range(1, 6):
            sess.run(train, data)
            serialized, value = sess.run([merged, loss], data)
            assert isinstance(serialized, bytes)
            writer.add_summary(serialized, global_step=step)
            losses[step] = value
        writer.close()
    events = read(tmp_path)
    assert sorted(events.Tags()["scalars"]) == ["metrics/loss", "metrics/w0"]
    curve = events.Scalars("metrics/loss")
    assert [e.step for e in curve] == [1, 2, 3, 4, 5]
    assert [F32(e.value) for e in curve] == [losses[s] for s in range(1, 6)]  # simple_value is float32


def test_a_fetched_summary_is_serialized_summary_bytes_anywhere_in_the_fetches(graph):
    x = tf.placeholder(tf.float32, [], name="value")
    first = summary.scalar("x", x)
    second = summary.scalar("double", x * 2.0)
    merged = summary.merge([first, second])
    with tf.Session() as sess:
        alone = summary_pb2.Summary.FromString(sess.run(merged, {x: 1.5}))
        nested = sess.run({"both": [first, second], "x": x}, {x: 2.0})
    assert [(v.tag, v.simple_value) for v in alone.value] == [("x", 1.5), ("double", 3.0)]
    assert nested["x"] == 2.0
    assert [summary_pb2.Summary.FromString(b).value[0].simple_value for b in nested["both"]] == [2.0, 4.0]


def test_one_tensor_under_two_tags_keeps_each_tag(graph):
    """A Session caches plans by fetch structure; each summary still serializes its own tags."""
    x = tf.placeholder(tf.float32, [], name="x")
    a, b = summary.scalar("a", x), summary.scalar("b", x)
    with tf.Session() as sess:
        tags = [summary_pb2.Summary.FromString(sess.run(s, {x: 1.0})).value[0].tag for s in (a, b, a)]
    assert tags == ["a", "b", "a"]


def test_tags_follow_tf1_naming(graph):
    """The tag is the summary's unique scope name: taken names get _1, scopes prefix, odd characters become _."""
    loss = tf.reduce_mean(tf.constant([1.0, 2.0]), name="loss")
    assert summary.scalar("loss", loss).tags == ("loss_1",)        # the op "loss" holds the name
    assert summary.scalar("loss", loss).tags == ("loss_2",)
    with tf.name_scope("eval"):
        assert summary.scalar("accuracy", loss).tags == ("eval/accuracy",)
    assert summary.scalar("learning rate (x10)", loss).tags == ("learning_rate__x10_",)
    assert summary.scalar("loss", loss, family="train").tags == ("train/train/loss",)


def test_merge_all_is_per_graph_and_none_when_empty():
    first, second = tf.Graph(), tf.Graph()
    with first.as_default():
        summary.scalar("a", tf.constant(1.0))
        summary.scalar("b", tf.constant(2.0), collections=["other"])
    with second.as_default():
        assert summary.merge_all() is None
        summary.scalar("c", tf.constant(3.0))
        assert summary.merge_all().tags == ("c",)
    with first.as_default():
        assert summary.merge_all().tags == ("a",)
        assert summary.merge_all(key="other").tags == ("b",)


def test_summaries_add_no_nodes_so_the_saved_graph_stays_tensorflows(graph):
    x = tf.placeholder(tf.float32, [], name="x")
    loss = tf.square(x, name="loss")
    before = [op.name for op in graph.get_operations()]
    summary.merge([summary.scalar("loss", loss), summary.scalar("x", x)])
    summary.merge_all()
    assert [op.name for op in graph.get_operations()] == before


def test_refusals_name_the_tag(graph):
    vector = tf.constant([1.0, 2.0], name="vector")
    with pytest.raises(ValueError, match=r"tf.summary.scalar 'v'.*shape \[2\]"):
        summary.scalar("v", vector)
    with pytest.raises(TypeError, match=r"'flag'.*bool"):
        summary.scalar("flag", tf.constant(True))
    unknown = tf.placeholder(tf.float32, None, name="unknown")
    fetch = summary.scalar("u", unknown)
    with tf.Session() as sess:
        with pytest.raises(InvalidArgumentError, match=r"'u'.*shape \[3\]"):
            sess.run(fetch, {unknown: [1.0, 2.0, 3.0]})
    with pytest.raises(InvalidArgumentError, match="duplicate tag 'u'"):
        summary.merge([fetch, fetch])


def test_add_summary_takes_bytes_or_a_proto_and_says_what_it_wanted(tmp_path, graph):
    fetch = summary.scalar("s", tf.constant(4.0))
    proto = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="manual", simple_value=0.25)])
    with summary.FileWriter(tmp_path) as writer:
        writer.add_summary(proto, 3)
        with pytest.raises(TypeError, match=r"sess.run\(summary\)"):
            writer.add_summary(fetch, 4)
    assert [(e.step, e.value) for e in read(tmp_path).Scalars("manual")] == [(3, 0.25)]


def test_flush_makes_events_readable_while_open_and_close_drops_later_ones(tmp_path):
    writer = summary.FileWriter(tmp_path, max_queue=1000, flush_secs=3600)
    value = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="t", simple_value=1.0)])
    writer.add_summary(value, 1)
    writer.flush()
    assert [e.step for e in read(tmp_path).Scalars("t")] == [1]
    writer.close()
    writer.add_summary(value, 2)          # dropped, as TF1's closed writer drops it
    writer.reopen()                       # a second file in the same logdir
    writer.add_summary(value, 3)
    writer.close()
    assert len(event_files(tmp_path)) == 2
    assert [e.step for e in read(tmp_path).Scalars("t")] == [1, 3]


def test_add_graph_takes_a_graph_def_from_a_file(tmp_path):
    from graphdef.wire.serialize import read_graph_def
    graph_def = read_graph_def("tests/tf_models/mlp/model.pb")
    with summary.FileWriter(tmp_path) as writer:
        writer.add_graph(None, graph_def=graph_def, global_step=7)
    written = read(tmp_path).Graph()
    # the same message; not byte for byte, as TensorFlow's file holds an empty `library`, a field
    # graphdef's proto does not declare and so writes back after `versions`
    assert written == type(written).FromString(serialize(graph_def))
    assert [n.name for n in written.node] == [n.name for n in graph_def.node]
