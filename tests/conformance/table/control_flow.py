"""Conformance cases: TF1 control flow (conds, loops, dead tensors) and TensorLists.

The graphs are what tf.cond and tf.while_loop build (Switch/Merge, Enter/Merge/Switch/
LoopCond/NextIteration/Exit frames); expected values are worked in numpy or are literals.
"""

import numpy as np

import graphdef as tf
from graphdef.ops.registry import build, raw_op

from .base import case, f32, i32, feed

def _cond_case(p):
    x = f32(1.5, -2.0, 3.0)
    tx, tp = feed("x", x), tf.placeholder(tf.bool, [], name="p")
    tf.identity(tf.cond(tp, lambda: tx * 2.0 + 1.0, lambda: tf.square(tx) - tx), name="y")
    with np.errstate(all="ignore"):
        expected = x * np.float32(2) + np.float32(1) if p else x * x - x
    return {"x": x, "p": np.array(p)}, {"y:0": expected}


@case("cond_true", "tf.cond with pred true: the Switch forwards to the true branch, Merge returns it.")
def _():
    return _cond_case(True)


@case("cond_false", "tf.cond with pred false: the true branch is dead, Merge forwards the false one.")
def _():
    return _cond_case(False)


@case("while_loop", "tf.while_loop: acc = acc * x + i for i < n, with x entering as a loop constant.")
def _():
    x, n = f32(0.5, -1.5), np.int32(6)
    tx, tn = feed("x", x), feed("n", np.array(n))
    i, acc = tf.while_loop(lambda i, a: i < tn, lambda i, a: (i + 1, a * tx + tf.cast(i, tf.float32)),
                           [tf.constant(0), tf.ones([2])])
    tf.identity(i, name="i")
    tf.identity(acc, name="acc")
    expected = np.ones(2, np.float32)
    for k in range(n):
        expected = expected * x + np.float32(k)  # exact: every product and sum is a short binary fraction
    return {"x": x, "n": np.array(n)}, {"i:0": np.array(n), "acc:0": expected}


@case("nested_while_loops", "A loop in a loop: the inner frame is a new one in every outer iteration.")
def _():
    n = np.int32(5)
    tn = feed("n", np.array(n))

    def outer(i, total):
        return i + 1, tf.while_loop(lambda j, t: j < i, lambda j, t: (j + 1, t + j * i), [0, total])[1]

    tf.identity(tf.while_loop(lambda i, t: i < tn, outer, [tf.constant(0), tf.constant(0)])[1], name="total")
    return {"n": np.array(n)}, {"total:0": i32(*[sum(j * k for k in range(n) for j in range(k))]).reshape(())}


@case("loop_in_untaken_branch", "A loop inside the untaken branch of a cond: its frame is dead, its Exits pass "
      "dead values out, and the Merge forwards the other branch.")
def _():
    x = np.float32(2.0)
    tx, tp = feed("x", np.array(x)), tf.placeholder(tf.bool, [], name="p")
    looped = lambda: tf.while_loop(lambda i, v: i < 4, lambda i, v: (i + 1, v * tx), [0, tx])[1]  # noqa: E731
    tf.identity(tf.cond(tp, looped, lambda: tx - 1.0), name="y")
    return {"x": np.array(x), "p": np.array(False)}, {"y:0": np.array(x - 1, np.float32)}


@case("control_trigger", "ControlTrigger runs though its control input is dead (the untaken side of a Switch), "
      "so an op ordered after it runs too.")
def _():
    x = f32(4.0, 5.0)
    tx, tp = feed("x", x), tf.placeholder(tf.bool, [], name="p")
    off, _ = build("Switch", [tx, tp], name="switch").outputs  # p is true: output_false is dead
    trigger = build("ControlTrigger", [], name="trigger", control_inputs=[off.op])
    with tf.control_dependencies([trigger]):
        tf.identity(tx, name="y")
    return {"x": x, "p": np.array(True)}, {"y:0": x}


@case("tensor_list_loop", "A loop reading rows of a TensorList made from x and writing x[t] * 2 + t into a "
      "reserved list, then stacked; with the list's length and element shape.")
def _():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    tx = feed("x", x)
    shape = tf.constant([3])
    source = raw_op("TensorListFromTensor", tx, shape)
    target = raw_op("TensorListReserve", shape, 4, element_dtype=tf.float32)

    def body(t, out):
        item = raw_op("TensorListGetItem", source, t, shape, element_dtype=tf.float32)
        return t + 1, raw_op("TensorListSetItem", out, t, item * 2.0 + tf.cast(t, tf.float32),
                             element_dtype=tf.float32)

    done = tf.while_loop(lambda t, out: t < 4, body, [tf.constant(0), target])[1]
    raw_op("TensorListStack", done, shape, element_dtype=tf.float32, num_elements=4, name="stacked")
    raw_op("TensorListLength", done, name="length")
    raw_op("TensorListElementShape", done, shape_type=tf.int32, name="element_shape")
    return {"x": x}, {"stacked:0": x * 2 + np.arange(4, dtype=np.float32)[:, None],
                      "length:0": np.array(4, np.int32), "element_shape:0": i32(3)}


@case("tensor_list_push_pop", "EmptyTensorList, then TensorListPushBack twice and TensorListPopBack once: the "
      "popped item is the last pushed, and the rest stacks to the first.")
def _():
    a, b = f32(1, 2), f32(-3, 4.5)
    ta, tb = feed("a", a), feed("b", b)
    lst = raw_op("EmptyTensorList", [2], -1, element_dtype=tf.float32)
    lst = raw_op("TensorListPushBack", lst, ta, element_dtype=tf.float32)
    lst = raw_op("TensorListPushBack", lst, tb, element_dtype=tf.float32)
    rest, last = raw_op("TensorListPopBack", lst, [2], element_dtype=tf.float32)
    tf.identity(last, name="last")
    raw_op("TensorListStack", rest, [2], element_dtype=tf.float32, name="rest")
    return {"a": a, "b": b}, {"last:0": b, "rest:0": a[None]}


@case("any_all_reverse", "Any and All over axes (keep_dims too) and ReverseV2 over two axes and a negative one.")
def _():
    b = np.array([[[True, False], [False, False]], [[True, True], [False, True]]])
    v = np.arange(8, dtype=np.float32).reshape(2, 2, 2)
    tb, tv = feed("b", b), feed("v", v)
    raw_op("Any", tb, [1, 2], name="any")
    raw_op("All", tb, 0, keep_dims=True, name="all")
    raw_op("ReverseV2", tv, [0, 2], name="rev")
    raw_op("ReverseV2", tv, [-2], name="rev_neg")
    return {"b": b, "v": v}, {"any:0": b.any(axis=(1, 2)), "all:0": b.all(axis=0, keepdims=True),
                              "rev:0": v[::-1, :, ::-1], "rev_neg:0": v[:, ::-1, :]}
