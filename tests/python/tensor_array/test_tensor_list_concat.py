"""TensorListConcatV2, as TF2's TensorArray.concat leaves it in a graph frozen by TensorFlow, against
TensorFlow's answers (items of different lengths, unset items read as zeros, leading_dims); graphrun-cc
names the op, which it has no kernel for yet."""

import numpy as np
import pytest

import graphdef
from tests.python.tensor_array.test_tf_made_loops import _cli_args, _run_everywhere
from tests.support import cc_helpers as cc
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture

RNG = np.random.default_rng(341)


def _frozen(tf, fn, spec):
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2
    concrete = tf.function(fn).get_concrete_function(spec)
    frozen = convert_variables_to_constants_v2(concrete)
    return frozen.graph.as_graph_def(), [t.name for t in frozen.outputs]


def _ragged_writes(tf):
    def fn(x):
        ta = tf.TensorArray(tf.float32, size=4, infer_shape=False)
        for i in range(4):
            ta = ta.write(i, x[: i + 1] * float(i + 1))
        return ta.concat()
    return fn


def _raw_lists(tf):
    from tensorflow.python.ops import gen_list_ops

    def fn(x):
        reserved = gen_list_ops.tensor_list_reserve([-1, 2], 3, tf.float32)
        one = gen_list_ops.tensor_list_set_item(reserved, 1, x[:2])
        with_leading = gen_list_ops.tensor_list_concat_v2(one, [-1, 2], tf.constant([1, 2, 3], tf.int64),
                                                          tf.float32)
        without = gen_list_ops.tensor_list_concat_v2(one, [-1, 2], tf.constant([], tf.int64), tf.float32)
        empty = gen_list_ops.tensor_list_concat_v2(gen_list_ops.tensor_list_reserve([-1, 2], 0, tf.float32),
                                                   [-1, 2], tf.constant([], tf.int64), tf.float32)
        return [*with_leading, *without, *empty]
    return fn


@pytest.mark.tf_oracle
@pytest.mark.parametrize("make", [_ragged_writes, _raw_lists], ids=lambda f: f.__name__)
def test_tensor_list_concat_matches_tensorflow(tmp_path, tf_oracle, make):  # noqa: F811 - the fixture
    tf = tf_oracle
    x = RNG.normal(size=(4, 2)).astype(np.float32)
    graph_def, names = _frozen(tf, make(tf), tf.TensorSpec([4, 2], tf.float32))
    assert any(n.op == "TensorListConcatV2" for n in graph_def.node)
    with tf.Graph().as_default() as g:
        tf.graph_util.import_graph_def(graph_def, name="")
        with tf.compat.v1.Session(graph=g) as sess:
            (placeholder,) = [n.name for n in graph_def.node if n.op == "Placeholder"]
            theirs = sess.run(names, {f"{placeholder}:0": x})
    _run_everywhere(tmp_path, graph_def, {placeholder: x}, names, theirs)


@pytest.mark.tf_oracle
def test_graphrun_cc_names_tensor_list_concat(tmp_path, tf_oracle, cc_runner):  # noqa: F811 - the fixture
    tf = tf_oracle
    graph_def, names = _frozen(tf, _ragged_writes(tf), tf.TensorSpec([4, 2], tf.float32))
    model = tmp_path / "model.pb"
    model.write_bytes(graph_def.SerializeToString())
    (placeholder,) = [n.name for n in graph_def.node if n.op == "Placeholder"]
    code, out, err = cc.run_cc(cc_runner, *_cli_args(tmp_path, model, {placeholder: np.zeros((4, 2), np.float32)},
                                                      names))
    assert code != 0 and out == "" and len(err.splitlines()) == 1, (code, out, err)
    assert "TensorListConcatV2" in err, err


def test_an_unset_item_among_ragged_ones_needs_leading_dims():
    """TensorFlow's words when an unset item's length cannot be known (checked against its kernel)."""
    g = graphdef.Graph()
    with g.as_default():
        reserved = graphdef.raw_op("TensorListReserve", np.int32(-1), np.int32(3), element_dtype=graphdef.float32)
        lst = graphdef.raw_op("TensorListSetItem", reserved, np.int32(0), np.float32([[1, 2]]),
                              element_dtype=graphdef.float32)
        lst = graphdef.raw_op("TensorListSetItem", lst, np.int32(1), np.float32([[1, 2], [3, 4]]),
                              element_dtype=graphdef.float32)
        out = graphdef.raw_op("TensorListConcatV2", lst, np.int32(-1), np.int64([]), element_dtype=graphdef.float32,
                              name="c")
    with graphdef.Session(graph=g) as sess, pytest.raises(graphdef.errors.InvalidArgumentError) as info:
        sess.run(out[0])
    assert "node 'c'" in str(info.value) and "\n" not in str(info.value)
    assert "List contains uninitialized tensor at index 2 but leading_dims has only 0 elements." in str(info.value)


def test_scalars_are_refused():
    g = graphdef.Graph()
    with g.as_default():
        lst = graphdef.raw_op("TensorListFromTensor", np.float32([1, 2]), np.int32(-1), element_dtype=graphdef.float32)
        out = graphdef.raw_op("TensorListConcatV2", lst, np.int32(-1), np.int64([]), element_dtype=graphdef.float32,
                              name="c")
    with graphdef.Session(graph=g) as sess, pytest.raises(graphdef.errors.InvalidArgumentError) as info:
        sess.run(out[0])
    assert "node 'c'" in str(info.value) and "at least vectors, found scalars" in str(info.value)
