"""A TensorArray used wrongly gets one line naming the node, in TensorFlow's words, from the Session and
from graphrun (each case's words checked against what TensorFlow's kernels say)."""

import numpy as np
import pytest

import graphdef as tf
from graphdef.ops.list_ops import MAX_LIST_ITEMS
from tests.python.ops34.runtimes import check_refused


def _array(size=3, **attrs):
    return tf.raw_op("TensorArrayV3", np.int32(size), dtype=tf.float32, name="ta", **attrs)


def _write(handle, index, value, flow, name):
    return tf.raw_op("TensorArrayWriteV3", handle, np.int32(index), np.float32(value), flow, name=name)


def _read(handle, index, flow, name="r"):
    return tf.raw_op("TensorArrayReadV3", handle, np.int32(index), flow, dtype=tf.float32, name=name)


def unwritten():
    handle, flow = _array()
    return [_read(handle, 1, _write(handle, 0, [1.0], flow, "w"))]


def written_twice():
    handle, flow = _array()
    return [_write(handle, 0, [2.0], _write(handle, 0, [1.0], flow, "w"), "w2")]


def write_out_of_range():
    handle, flow = _array()
    return [_write(handle, 3, [1.0], flow, "w")]


def read_out_of_range():
    handle, flow = _array()
    return [_read(handle, -1, _write(handle, 0, [1.0], flow, "w"))]


def read_twice():
    handle, flow = _array()
    first = _read(handle, 0, _write(handle, 0, [1.0], flow, "w"), "r1")
    with tf.control_dependencies([first]):
        return [_read(handle, 0, first.op.inputs[2], "r")]


def wrong_element_shape():
    handle, flow = _array(element_shape=[2])
    value = tf.placeholder_with_default(np.float32([1, 2, 3]), [None])
    return [tf.raw_op("TensorArrayWriteV3", handle, np.int32(0), value, flow, name="w")]


def huge_size():
    handle, flow = tf.raw_op("TensorArrayV3", tf.placeholder_with_default(np.int32(2**31 - 1), []),
                             dtype=tf.float32, name="ta")
    return [flow]


def negative_size():
    handle, flow = tf.raw_op("TensorArrayV3", tf.placeholder_with_default(np.int32(-1), []),
                             dtype=tf.float32, name="ta")
    return [flow]


def huge_element_shape():
    handle, flow = _array(element_shape=[1 << 30, 1 << 30])
    return [_read(handle, 0, flow)]


def gather_ragged():
    handle, flow = _array(2)
    flow = _write(handle, 1, [1.0, 2.0], _write(handle, 0, [1.0], flow, "w"), "w2")
    return [tf.raw_op("TensorArrayGatherV3", handle, np.int32([0, 1]), flow, dtype=tf.float32, name="g")]


CASES = [
    (unwritten, "r", "Could not read from TensorArray index 1. Furthermore, the element shape is not fully "
                     "defined: <unknown>."),
    (written_twice, "w2", "Could not write to TensorArray index 0 because it has already been written to."),
    (write_out_of_range, "w", "Tried to write to index 3 but array is not resizeable and size is: 3"),
    (read_out_of_range, "r", "Tried to read from index -1 but array size is: 3"),
    (read_twice, "r", "Could not read index 0 twice because it was cleared after a previous read (perhaps try "
                      "setting clear_after_read = false?)."),
    (wrong_element_shape, "w", "because the value shape is [3] which is incompatible with the TensorArray's "
                               "inferred element shape: [2]"),
    (huge_size, "ta", f"a TensorArray's size must be in 0..{MAX_LIST_ITEMS}, got 2147483647"),
    (negative_size, "ta", f"a TensorArray's size must be in 0..{MAX_LIST_ITEMS}, got -1"),
    (huge_element_shape, "r", "output [1073741824,1073741824] float32 would take 4.0 EiB, over the limit"),
    (gather_ragged, "g", "TensorArray has inconsistent shapes. Index 0 has shape: [1] but index 1 has shape: [2]"),
]


@pytest.mark.parametrize("make, node, words", CASES, ids=[c[0].__name__ for c in CASES])
def test_one_line_naming_the_node(tmp_path, make, node, words):
    check_refused(tmp_path, make, {}, node, words)


def test_zeros_for_an_unwritten_item_of_known_shape():
    """TensorFlow reads zeros where the element shape is fully known (tested against it: [0. 0.])."""
    g = tf.Graph()
    with g.as_default():
        handle, flow = _array(element_shape=[2])
        value = _read(handle, 2, flow)
    with tf.Session(graph=g) as sess:
        np.testing.assert_array_equal(sess.run(value), np.zeros(2, np.float32))


@pytest.mark.parametrize("role", ["fetch", "feed"])
def test_a_handle_is_neither_fed_nor_fetched(role):
    g = tf.Graph()
    with g.as_default():
        ta = tf.TensorArray(tf.float32, size=2, name="ta")
        flow = ta.write(0, [1.0]).flow
    fetch, feed = (ta.handle, {}) if role == "fetch" else (flow, {ta.handle: np.array([b"a", b"b"], object)})
    with tf.Session(graph=g) as sess, pytest.raises(TypeError) as info:
        sess.run(fetch, feed)
    fix = "fetch a tensor read from it" if role == "fetch" else "feed the tensors it is made from"
    assert str(info.value) == (f"Session.run: cannot {role} 'ta:0': it is a resource (a TensorArray's handle), "
                               f"which only passes between ops; {fix}")


def popped_empty():
    handle = tf.raw_op("StackV2", np.int32(-1), elem_type=tf.float32, name="stack")
    return [tf.raw_op("StackPopV2", handle, elem_type=tf.float32, name="pop")]


def test_a_pop_from_an_empty_stack_is_one_line(tmp_path):
    check_refused(tmp_path, popped_empty, {}, "pop", "Stack stack is empty.")
