"""Conformance cases for TF1's loop machinery outside a loop: the TensorArrayV3 family, TensorListConcatV2,
the Stack ops and the gradient helpers TF1 gradients of loops leave in a graph (SigmoidGrad, TanhGrad,
ConcatOffset).

Expected values are literals worked by hand; tests/python/tensor_array checks the same ops against
TensorFlow inside loops. graphrun-cc has no kernels for them yet: it skips these cases with that reason.
"""

import numpy as np

import graphdef as tf

from .base import case, f32, feed, i32

NO_CC = {"graphrun-cc": "no C++ kernel yet (issue 34, Python side first); tests/python/tensor_array asserts "
                        "its 'no kernel for <Op> (<node>)' line"}
ROWS = f32([1, 2], [3, 4], [5, 6])


@case("tensor_array_ops", "A TensorArray of 3 rows (clear_after_read false) written one by one, read, stacked "
      "(GatherV3), gathered [2, 0], its size; another scattered at [1, 0], concatenated, split into lengths "
      "[1, 2] and read back; and the gradient arrays of both (GradV3, GradWithShape) written and read; every "
      "array closed.", skip=NO_CC)
def _():
    x = feed("x", ROWS)
    ta = tf.TensorArray(tf.float32, size=3, clear_after_read=False)  # read, stacked and gathered
    for k in range(3):
        ta = ta.write(k, x[k])
    tf.identity(ta.read(1), name="read")
    tf.identity(ta.stack(), name="stack")
    tf.identity(ta.gather([2, 0]), name="gather")
    tf.identity(ta.size(), name="size")
    sc = tf.TensorArray(tf.float32, size=2).scatter([1, 0], x[:2])
    tf.identity(sc.concat(), name="concat")
    sp = tf.TensorArray(tf.float32, size=2, infer_shape=False).split(tf.reshape(x, [6])[:3], np.int64([1, 2]))
    tf.identity(sp.read(1), name="split_1")
    grad_handle, grad_flow = tf.raw_op("TensorArrayGradV3", ta.handle, ta.flow, source="g")
    grad_flow = tf.raw_op("TensorArrayWriteV3", grad_handle, np.int32(0), x[2] * 10.0, grad_flow)
    tf.raw_op("TensorArrayReadV3", grad_handle, np.int32(0), grad_flow, dtype=tf.float32, name="grad_read")
    shaped, shaped_flow = tf.raw_op("TensorArrayGradWithShape", sc.handle, sc.flow, i32(2), source="h")
    shaped_flow = tf.raw_op("TensorArrayWriteV3", shaped, np.int32(1), x[:2], shaped_flow)
    tf.raw_op("TensorArrayReadV3", shaped, np.int32(1), shaped_flow, dtype=tf.float32, name="shaped_read")
    with tf.control_dependencies([tf.identity(ta.stack()), tf.identity(sp.read(0))]):
        for array in (ta, sc, sp):
            array.close()
    return {"x": ROWS}, {"read:0": f32(3, 4), "stack:0": ROWS, "gather:0": f32([5, 6], [1, 2]),
                         "size:0": np.int32(3), "concat:0": f32(3, 4, 1, 2), "split_1:0": f32(2, 3),
                         "grad_read:0": f32(50, 60), "shaped_read:0": f32([1, 2], [3, 4])}


@case("tensor_list_concat", "TensorListConcatV2 of a list of three [2]-rows made by TensorListFromTensor, with "
      "element_shape [-1] and leading_dims unused: the rows end to end, and their lengths.", skip=NO_CC)
def _():
    x = feed("x", ROWS)
    handle = tf.raw_op("TensorListFromTensor", x, i32(2), name="list")
    tf.raw_op("TensorListConcatV2", handle, i32(-1), np.zeros(0, np.int64), element_dtype=tf.float32, name="cat")
    return {"x": ROWS}, {"cat:0": f32(1, 2, 3, 4, 5, 6), "cat:1": np.int64([2, 2, 2])}


@case("stack_ops", "StackV2 of floats: push 1.5 then 2.5 (each passed on), pop twice (last in, first out), "
      "close.", skip=NO_CC)
def _():
    a, b = feed("a", np.float32(1.5)), feed("b", np.float32(2.5))
    stack = tf.raw_op("StackV2", np.int32(-1), elem_type=tf.float32, stack_name="s")
    first = tf.raw_op("StackPushV2", stack, a, name="push_a")
    with tf.control_dependencies([first]):
        second = tf.raw_op("StackPushV2", stack, b, name="push_b")
    with tf.control_dependencies([second]):
        top = tf.raw_op("StackPopV2", stack, elem_type=tf.float32, name="pop_1")
    with tf.control_dependencies([top]):
        under = tf.raw_op("StackPopV2", stack, elem_type=tf.float32, name="pop_2")
    with tf.control_dependencies([under]):
        tf.raw_op("StackCloseV2", stack)
    return {"a": np.float32(1.5), "b": np.float32(2.5)}, {
        "push_a:0": np.float32(1.5), "push_b:0": np.float32(2.5), "pop_1:0": np.float32(2.5),
        "pop_2:0": np.float32(1.5)}


@case("loop_gradient_helpers", "SigmoidGrad (dy * y * (1 - y)) and TanhGrad (dy * (1 - y^2)) of float32; "
      "ConcatOffset of shapes [2, 3], [2, 5] and [2, 1] along axis 1: where each starts.", skip=NO_CC)
def _():
    y, dy = f32(0.25, 0.5, -0.5, 1), f32(2, -4, 1, 3)
    yt, dyt = feed("y", y), feed("dy", dy)
    tf.raw_op("SigmoidGrad", yt, dyt, name="sig")
    tf.raw_op("TanhGrad", yt, dyt, name="tanh")
    tf.raw_op("ConcatOffset", np.int32(1), [i32(2, 3), i32(2, 5), i32(2, 1)], name="off")
    return {"y": y, "dy": dy}, {"sig:0": f32(0.375, -1, -0.75, 0), "tanh:0": f32(1.875, -3, 0.75, 0),
                                "off:0": i32(0, 0), "off:1": i32(0, 3), "off:2": i32(0, 8)}
