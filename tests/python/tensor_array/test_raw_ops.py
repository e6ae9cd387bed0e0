"""The TensorArrayV3 ops one by one in graphs TensorFlow builds (its gen_data_flow_ops), run by TensorFlow and by
the Session on the same GraphDef: dynamic_size growth, zeros for unwritten items of known shape, concat and
split, the gradient arrays (writes that add up, GradWithShape), size and close."""

import numpy as np
import pytest

import graphdef
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture


def _array(g, tf, size=3, **attrs):
    attrs.setdefault("dtype", tf.float32)
    return g.tensor_array_v3(size, **attrs)


def grows(tf, g):
    h, f = _array(g, tf, 1, dynamic_size=True, element_shape=[1])
    f = g.tensor_array_write_v3(h, 4, [1.0], f)
    return [g.tensor_array_size_v3(h, f), g.tensor_array_gather_v3(h, [0, 1, 4], f, dtype=tf.float32)]


def zeros_where_unwritten(tf, g):
    h, f = _array(g, tf, element_shape=[2], clear_after_read=False)
    f = g.tensor_array_write_v3(h, 1, [1.0, 2.0], f)
    return [g.tensor_array_read_v3(h, 0, f, dtype=tf.float32), g.tensor_array_gather_v3(h, [2, 1], f, dtype=tf.float32)]


def concat_and_split(tf, g):
    h, f = _array(g, tf)
    f = g.tensor_array_split_v3(h, [1.0, 2.0, 3.0, 4.0, 5.0], tf.constant([2, 0, 3], tf.int64), f)
    value, lengths = g.tensor_array_concat_v3(h, f, dtype=tf.float32)
    return [value, lengths]


def gradient_arrays(tf, g):
    h, f = _array(g, tf, clear_after_read=False)
    f = g.tensor_array_write_v3(h, 0, [1.0], f)
    gh, gf = g.tensor_array_grad_v3(h, f, source="gradients")
    gf = g.tensor_array_write_v3(gh, 0, [1.0], gf)
    gf = g.tensor_array_write_v3(gh, 0, [2.5], gf)
    sh, sf = g.tensor_array_grad_with_shape(h, f, [4], source="other")
    sf = g.tensor_array_write_v3(sh, 1, [[1.0]] * 4, sf)
    return [g.tensor_array_read_v3(gh, 0, gf, dtype=tf.float32), g.tensor_array_size_v3(gh, gf),
            g.tensor_array_read_v3(sh, 1, sf, dtype=tf.float32)]


def scatter_then_close(tf, g):
    h, f = _array(g, tf, 4, element_shape=[2])
    f = g.tensor_array_scatter_v3(h, [3, 0], [[1.0, 2.0], [3.0, 4.0]], f)
    stacked = g.tensor_array_gather_v3(h, [0, 1, 2, 3], f, dtype=tf.float32, element_shape=[2])
    with tf.control_dependencies([stacked]):
        close = g.tensor_array_close_v3(h)
    with tf.control_dependencies([close]):
        return [tf.identity(stacked)]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("build", [grows, zeros_where_unwritten, concat_and_split, gradient_arrays, scatter_then_close],
                         ids=lambda f: f.__name__)
def test_the_session_gives_tensorflows_answer(tmp_path, tf_oracle, build):  # noqa: F811 - the fixture
    tf = tf_oracle
    from tensorflow.python.ops import gen_data_flow_ops
    graph = tf.Graph()
    with graph.as_default():
        fetches = build(tf, gen_data_flow_ops)
        names = [t.name for t in fetches]
        with tf.compat.v1.Session(graph=graph) as sess:
            theirs = sess.run(names)
    model = tmp_path / "model.pb"
    model.write_bytes(graph.as_graph_def().SerializeToString())
    with graphdef.Session(graph=graphdef.load(model)) as sess:
        ours = sess.run(names)
    for name, a, b in zip(names, ours, theirs):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=name)
        assert np.asarray(a).dtype == np.asarray(b).dtype, name
