"""Hostile input to the Python runtime, the cases the long fuzz campaign (fuzz/py) found: each is kept as
the smallest graph that reproduced it, and ends in one clear line, never a traceback, crash, hang or
unbounded allocation. tests/hostile/test_py.py has the hand-written cases."""

import numpy as np
import pytest

import graphdef as tf
from graphdef.framework import limits
from graphdef.framework.errors import InvalidArgumentError, ResourceExhaustedError, UnimplementedError
from tests.support.cc_helpers import fails as cc_fails
from tests.support.cc_helpers import run_cc
from tests.support.graphrun_helpers import fails, graphrun
from graphdef.ops.control_flow import merge
from graphdef._proto import graph_pb2
from graphdef.wire.serialize import load
from tests.support.pbtxt_helpers import const, load_fails, node, one_line, write_pbtxt


# -- found by the long fuzz campaign ------------------------------------------------------------

def test_found_transpose_with_a_fed_perm_that_is_no_permutation():
    g = tf.Graph()
    with g.as_default():
        perm = tf.placeholder(tf.int32, [3], name="perm")
        t = tf.transpose(tf.zeros([1, 2, 3]), perm, name="t")
    with tf.Session(graph=g) as sess, pytest.raises(InvalidArgumentError,
                                                    match=r"^node 't' \(Transpose\): perm \[0, 3, 0\] is not a "
                                                          "permutation of the 3 dims"):
        sess.run(t, {perm: [0, 3, 0]})


def test_found_a_merge_with_two_live_inputs_fires_once():
    """A Merge both of whose inputs are live (a malformed graph: a cond's branches are exclusive)
    passed on the first and then fired again, delivering its consumer's first input twice; the
    consumer ran before its other input arrived ("'NoneType' object is not callable"-style errors).
    As in TensorFlow, a Merge fires once an iteration, on its first live input."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        merged = merge([x + 1.0, x * 2.0], name="m")[0]
        late = x + 3.0
        for _ in range(4):  # arrives after both of the Merge's inputs
            late = late + 0.0
        y = tf.multiply(merged, late, name="y")
    with tf.Session(graph=g) as sess:
        got = sess.run(y, {x: 5.0})
    assert got in ((5.0 + 1.0) * (5.0 + 3.0), (5.0 * 2.0) * (5.0 + 3.0)), got


def test_found_shapes_beyond_yobibytes_and_empty_shapes_beyond_int64():
    assert limits.format_bytes(4 * (2 ** 32) ** 16) == "about 10^154 B"
    with pytest.raises(ResourceExhaustedError, match=r"is empty, but its other dims would take more than 16.0 EiB"):
        limits.check((2 ** 32, 2 ** 32, 0), np.float32, where="node 'z' (Fill)")
    with pytest.raises(ResourceExhaustedError, match=r"\[1000000000000,0\] float32 is empty, but its other dims would "
                                                     r"take 3.6 TiB, over the limit of"):
        limits.check((10 ** 12, 0), np.float32, where="node 'z' (Fill)")


def test_found_a_random_feed_of_an_empty_but_overflowing_shape(capsys, tmp_path, runner):
    text = node("v", "Placeholder", dtype="type: DT_FLOAT") + node("y", "Identity", ["v"], T="type: DT_FLOAT")
    path = write_pbtxt(tmp_path, text, "v.pb")
    line = fails(capsys, 2, path, "--random", "--shape", f"v={2 ** 32},{2 ** 32},0",
                 mentions=["--shape v: random value [4294967296,4294967296,0] float32 is empty, but its other dims "
                           "would take more than 16.0 EiB"])
    assert cc_fails(runner, 2, path, "--random", "--shape", f"v={2 ** 32},{2 ** 32},0") == \
        "graphrun-cc" + line.removeprefix("graphrun").rstrip("\n")


@pytest.mark.parametrize("op_type", ["AvgPool", "MaxPool"])
def test_found_pooling_with_a_window_of_2_31_under_same_padding(op_type):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [1, 5, 5, 1], name="x")
        from graphdef.ops.registry import raw_op
        p = raw_op(op_type, x, ksize=[1, 2 ** 31, 2 ** 31, 1], strides=[1, 2, 2, 1], padding="SAME", name="p")
    with tf.Session(graph=g) as sess, pytest.raises(ResourceExhaustedError, match=rf"^node 'p' \({op_type}\): "):
        sess.run(p, {x: np.ones((1, 5, 5, 1), np.float32)})


def test_found_unsorted_segment_sum_with_a_huge_num_segments():
    g = tf.Graph()
    with g.as_default():
        from graphdef.ops.registry import raw_op
        s = raw_op("UnsortedSegmentSum", tf.ones([2, 3]), tf.constant([0, 1]),
                   tf.placeholder(tf.int64, [], name="n"), name="s")
    with tf.Session(graph=g) as sess, pytest.raises(ResourceExhaustedError,
                                                    match=r"^node 's' \(UnsortedSegmentSum\): output "):
        sess.run(s, {"n:0": 10 ** 12})


def test_found_fill_with_a_dims_vector_of_2_31_entries(tmp_path, capsys):
    """A dims input claiming 2^31 entries once built a 2^31-entry shape list (MemoryError)."""
    text = (const("dims", shape=(2 ** 31,), values=(1,)) + const("v", "DT_FLOAT", values=(1.0,), field="float_val")
            + node("big", "Fill", ["dims", "v"], T="type: DT_FLOAT", index_type="type: DT_INT32"))
    path = write_pbtxt(tmp_path, text)
    fails(capsys, 3, path, mentions=["'big'", "64 dims"])


# -- shape inference: no op assumes the rank of an input read from a file ------------------------

def _rank_probe_attrs(opdef):
    """Plausible values for an op's attrs, so inference gets past them to the input shapes."""
    from graphdef.framework import dtypes
    from graphdef.ops.registry import REQUIRED
    plain = {"int": 1, "float": 1.0, "bool": False, "string": "VALID", "list(int)": [1, 1, 1, 1],
             "list(float)": [], "list(string)": [], "list(type)": (), "shape": None}
    attrs = {}
    for name, attr in opdef.attrs.items():
        if attr.kind == "type":
            if attr.default is REQUIRED:
                allowed = attr.allowed or {dtypes.float32}
                attrs[name] = dtypes.float32 if dtypes.float32 in allowed else sorted(allowed, key=str)[0]
        elif attr.default is REQUIRED and attr.kind in plain:
            attrs[name] = plain[attr.kind]
    return attrs


def test_every_ops_inference_refuses_inputs_of_any_rank_with_one_line():
    """The class behind SoftmaxCrossEntropyWithLogits (unknown-rank logits merged with scalar
    labels) and Conv2DBackpropFilter (a 2-D out_backprop read for its 4th dim): each input of
    each op, given ranks 0 to 5 while the others are unknown, is either accepted or refused
    with the ValueError or TypeError the loader turns into one line, never an IndexError."""
    from graphdef.ops.registry import REGISTRY, create
    from graphdef.framework.shapes import TensorShape
    checked = 0
    for op_type, opdef in sorted(REGISTRY.items()):
        attrs = _rank_probe_attrs(opdef)
        if any(arg.type_list or arg.is_ref for arg in opdef.inputs):
            continue
        for position in range(len(opdef.inputs)):
            for rank in range(6):
                for dim in (None, 0, 2):
                    g = tf.Graph()
                    with g.as_default():
                        inputs = []
                        for i, arg in enumerate(opdef.inputs):
                            dtype = arg.dtype or attrs.get(arg.type_attr) or opdef.attrs[arg.type_attr].default
                            shape = TensorShape([dim] * rank if i == position else None)
                            for _ in range(attrs.get(arg.number_attr, 1) if arg.number_attr else 1):
                                inputs.append(tf.placeholder(dtype, shape))
                        try:
                            create(g, opdef, "n", inputs, attrs)
                        except (TypeError, ValueError) as e:
                            one_line(e)
                        checked += 1
    assert checked > 1000


def test_found_cross_entropy_with_unknown_rank_logits_and_scalar_labels(tmp_path, capsys):
    text = (node("logits", "Placeholder", dtype="type: DT_FLOAT") + const("labels", "DT_FLOAT", (), [1.0], "float_val")
            + node("xent", "SoftmaxCrossEntropyWithLogits", ["logits", "labels"], T="type: DT_FLOAT"))
    load_fails(tmp_path, capsys, text, "node 'xent' (SoftmaxCrossEntropyWithLogits)", "must be [batch, classes]")


def test_found_conv2d_backprop_filter_with_a_2d_out_backprop(tmp_path, capsys):
    text = (node("x", "Placeholder", dtype="type: DT_FLOAT") + node("sizes", "Placeholder", dtype="type: DT_INT32")
            + node("dy", "Placeholder", dtype="type: DT_FLOAT", shape="shape { dim { size: 2 } dim { size: 3 } }")
            + node("df", "Conv2DBackpropFilter", ["x", "sizes", "dy"], T="type: DT_FLOAT", padding='s: "VALID"',
                   strides="list { i: 1 i: 1 i: 1 i: 1 }"))
    load_fails(tmp_path, capsys, text, "node 'df' (Conv2DBackpropFilter)", "out_backprop must be 4-D")


_LONG = node("v", "Placeholder", dtype="type: DT_INT32", shape=f"shape {{ dim {{ size: {2 ** 31} }} }}")
_F = node("x", "Placeholder", dtype="type: DT_FLOAT")
_ONE = const("one", shape=(1,), values=(1,))
SHAPE_VECTOR_CASES = {
    "Reshape": (_F + node("n", "Reshape", ["x", "v"], T="type: DT_FLOAT", Tshape="type: DT_INT32"), "shape"),
    "BroadcastTo": (_F + node("n", "BroadcastTo", ["x", "v"], T="type: DT_FLOAT", Tidx="type: DT_INT32"), "shape"),
    "RandomUniform": (node("n", "RandomUniform", ["v"], T="type: DT_INT32", dtype="type: DT_FLOAT"), "shape"),
    "StridedSliceGrad": (_F + _ONE + node("n", "StridedSliceGrad", ["v", "one", "one", "one", "x"], T="type: DT_FLOAT",
                                          Index="type: DT_INT32"), "shape"),
    "Tile": (_F + node("n", "Tile", ["x", "v"], T="type: DT_FLOAT", Tmultiples="type: DT_INT32"), "multiples"),
    "Slice": (_F + node("n", "Slice", ["x", "v", "v"], T="type: DT_FLOAT", Index="type: DT_INT32"), "begin"),
    "AvgPoolGrad": (_F + node("n", "AvgPoolGrad", ["v", "x"], T="type: DT_FLOAT", padding='s: "VALID"',
                              ksize="list { i: 1 i: 1 i: 1 i: 1 }", strides="list { i: 1 i: 1 i: 1 i: 1 }"),
                    "orig_input_shape"),
}


@pytest.mark.parametrize("op_type", sorted(SHAPE_VECTOR_CASES))
def test_found_shape_vectors_declared_2_31_long(tmp_path, capsys, op_type):
    """A Placeholder of shape [2^31] costs nothing to declare; Reshape, BroadcastTo, RandomUniform
    and StridedSliceGrad built a 2^31-entry shape from it (MemoryError), as Fill once did."""
    text, what = SHAPE_VECTOR_CASES[op_type]
    load_fails(tmp_path, capsys, _LONG + text, f"node 'n' ({op_type})",
                f"{what} has 2147483648 entries; a tensor has at most 64 dims")


# -- value-sized work and allocations found by the fuzz campaign ---------------------------------

@pytest.mark.parametrize("dtype, start, limit, delta, expected", [
    (np.uint64, 0, 2, 2 ** 64 - 1, [0]),            # a delta int64 cannot hold (was an OverflowError)
    (np.uint64, 2 ** 64 - 3, 2 ** 64 - 1, 1, [2 ** 64 - 3, 2 ** 64 - 2]),
    (np.int64, -2 ** 63, 2 ** 63 - 1, 2 ** 62, [-2 ** 63, -2 ** 62, 0, 2 ** 62]),
    (np.int8, 100, -128, -50, [100, 50, 0, -50, -100]),
])
def test_found_range_of_64_bit_values_is_exact(dtype, start, limit, delta, expected):
    g = tf.Graph()
    with g.as_default():
        from graphdef.ops.registry import raw_op
        r = raw_op("Range", *(tf.constant(np.array(v, dtype)) for v in (start, limit, delta)), name="r")
    with tf.Session(graph=g) as sess:
        out = sess.run(r)
    assert out.dtype == dtype and out.tolist() == expected


def _one_hot_graph(axis, depth, indices_shape=None):
    g = tf.Graph()
    with g.as_default():
        from graphdef.ops.registry import raw_op
        i = tf.placeholder(tf.int32, indices_shape, name="i")
        d = tf.placeholder(tf.int32, [], name="d")
        out = raw_op("OneHot", i, d, np.float32(1), np.float32(0), axis=axis, name="oh")
    return g, out


def test_found_one_hot_with_an_axis_past_unknown_rank_indices():
    g, out = _one_hot_graph(5, 3)
    with tf.Session(graph=g) as sess, pytest.raises(InvalidArgumentError) as e:
        sess.run(out, {"i:0": [0, 1], "d:0": 3})
    assert one_line(e.value) == "node 'oh' (OneHot): axis 5 is out of range for indices of rank 1"


def test_found_one_hot_with_an_axis_below_minus_one_is_refused_when_building():
    with pytest.raises(ValueError, match=r"^OneHot 'oh': axis -2 must be -1"):
        _one_hot_graph(-2, 3)


def test_found_one_hot_of_empty_indices_and_a_huge_depth_is_empty_not_allocated():
    g, out = _one_hot_graph(-1, 3)
    with tf.Session(graph=g) as sess:
        assert sess.run(out, {"i:0": np.zeros([0], np.int32), "d:0": 2 ** 31 - 1}).shape == (0, 2 ** 31 - 1)
        # and the ordinary case is unchanged: out-of-range indices give all-off rows
        assert sess.run(out, {"i:0": [[2, -1], [0, 3]], "d:0": 3}).tolist() == [
            [[0, 0, 1], [0, 0, 0]], [[1, 0, 0], [0, 0, 0]]]


def test_found_tile_to_an_empty_result_does_not_build_the_copies_first():
    g = tf.Graph()
    with g.as_default():
        m = tf.placeholder(tf.int64, [2], name="m")
        t = tf.tile(tf.ones([2, 2]), m, name="t")
    with tf.Session(graph=g) as sess:
        assert sess.run(t, {m: [2 ** 31 - 1, 0]}).shape == (2 * (2 ** 31 - 1), 0)


def test_found_strided_slice_grad_with_a_fed_shape_of_2_31(monkeypatch):
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", str(1 << 30))
    g = tf.Graph()
    with g.as_default():
        from graphdef.ops.registry import raw_op
        shape = tf.placeholder(tf.int64, [1], name="shape")
        one = np.array([1], np.int64)
        out = raw_op("StridedSliceGrad", shape, np.array([0], np.int64), one, one, tf.ones([1]), name="ssg")
    with tf.Session(graph=g) as sess, pytest.raises(ResourceExhaustedError) as e:
        sess.run(out, {shape: [2 ** 31 - 1]})
    assert one_line(e.value).startswith("node 'ssg' (StridedSliceGrad): output [2147483647] float32 would take")


@pytest.mark.parametrize("op_type", ["MaxPool", "AvgPool"])
def test_found_pooling_with_a_window_far_larger_than_the_input(op_type):
    """A 2^30 window on an empty input, and a 4096 x 4096 one on a 3 x 3 input, once looped over
    every window offset (hours); only the offsets reaching the input are visited now, and the
    result equals that of a window just large enough to cover it."""
    from graphdef.ops.registry import raw_op
    x_value = np.arange(18, dtype=np.float32).reshape(2, 3, 3, 1) - 5
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3, 3, 1], name="x")
        outs = {k: raw_op(op_type, x, ksize=[1, k, k, 1], strides=[1, 1, 1, 1], padding="SAME", name=f"p{k}")
                for k in (2 ** 30, 4096, 7)}
        grads = {k: tf.gradients(tf.reduce_sum(outs[k] * outs[k]), [x])[0] for k in (4096, 7)}
    with tf.Session(graph=g) as sess:
        assert sess.run(outs[2 ** 30], {x: np.zeros([0, 3, 3, 1], np.float32)}).shape == (0, 3, 3, 1)
        big, small, gbig, gsmall = sess.run([outs[4096], outs[7], grads[4096], grads[7]], {x: x_value})
    np.testing.assert_array_equal(big, small)
    np.testing.assert_array_equal(gbig, gsmall)


def test_found_conv2d_backprop_input_with_huge_fed_input_sizes():
    g = tf.Graph()
    with g.as_default():
        from graphdef.ops.registry import raw_op
        sizes = tf.placeholder(tf.int32, [4], name="sizes")
        dy = tf.placeholder(tf.float32, [1, None, None, 0], name="dy")
        dx = raw_op("Conv2DBackpropInput", sizes, tf.zeros([1, 1, 2, 0]), dy, strides=[1, 1, 1, 1],
                    padding="VALID", name="dx")
    with tf.Session(graph=g) as sess, pytest.raises(ResourceExhaustedError) as e:
        sess.run(dx, {sizes: [1, 100000, 100000, 2], dy: np.zeros([1, 100000, 100000, 0], np.float32)})
    assert one_line(e.value).startswith("node 'dx' (Conv2DBackpropInput): output [1,100000,100000,2] float32")


def test_found_random_uniform_of_200_mb_is_made_in_chunks_with_unchanged_values():
    """A [16776962, 3] RandomUniform (201 MB, under the fuzzer's limit) took over 10 s under load:
    its whole-size uint64 temporaries took gigabytes. It is made a chunk at a time now; the
    values across a chunk boundary are still the stream's, word for word."""
    from graphdef.ops import random as random_ops
    from graphdef.framework.random_feeds import random_value, words
    count = random_ops._CHUNK + 7
    g = tf.Graph()
    with g.as_default():
        from graphdef.ops.registry import raw_op
        u = raw_op("RandomUniform", np.array([count], np.int32), dtype=tf.float32, seed=1, seed2=2, name="u")
    with tf.Session(graph=g) as sess:
        out = sess.run(u)
    stream = (1 << 32) | 2
    expected = ((words(stream, "u", count) >> np.uint64(40)).astype(np.float64) * 2.0 ** -24).astype(np.float32)
    np.testing.assert_array_equal(out, expected)
    fed = random_value(5, "x", np.float32, (count,))
    whole = ((words(5, "x", count) >> np.uint64(40)).astype(np.float64) * 2.0 ** -23 - 1.0).astype(np.float32)
    np.testing.assert_array_equal(fed, whole)


def _limited_run(monkeypatch, build, feeds=None):
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", str(1 << 20))
    g = tf.Graph()
    with g.as_default():
        out = build()
    with tf.Session(graph=g) as sess, pytest.raises(ResourceExhaustedError) as e:
        sess.run(out, feeds(g) if feeds else None)
    return one_line(e.value)


def test_found_conv2d_patch_matrix_larger_than_input_and_output(monkeypatch):
    """A 32 x 32 filter over a 32 x 32 image: 4 KiB in and out, a 4 MiB patch matrix between."""
    def build():
        x = tf.placeholder(tf.float32, [1, 32, 32, 1], name="x")
        return tf.nn.conv2d(x, tf.ones([32, 32, 1, 1]), strides=[1, 1, 1, 1], padding="SAME", name="c")
    message = _limited_run(monkeypatch, build, lambda g: {"x:0": np.ones([1, 32, 32, 1], np.float32)})
    assert message.startswith("node 'c' (Conv2D): patch matrix [1024,1024] float32 would take 4.0 MiB")


@pytest.mark.parametrize("op_type, filter_shape", [("Conv2D", [1, 1, 4, 2048]),
                                                   ("DepthwiseConv2dNative", [1, 1, 4, 512])])
def test_found_convolution_whose_filter_multiplies_the_output(monkeypatch, op_type, filter_shape):
    from graphdef.ops.registry import raw_op

    def build():
        x = tf.placeholder(tf.float32, [1, None, None, 4], name="x")
        return raw_op(op_type, x, tf.ones(filter_shape), strides=[1, 1, 1, 1], padding="VALID", name="c")
    message = _limited_run(monkeypatch, build, lambda g: {"x:0": np.ones([1, 16, 16, 4], np.float32)})
    assert message.startswith(f"node 'c' ({op_type}): output [1,16,16,2048] float32 would take 2.0 MiB")


def test_found_matmul_of_empty_matrices_with_a_large_product(monkeypatch):
    """[1024, 0] x [0, 1024]: nothing in, 4 MiB out."""
    def build():
        a = tf.placeholder(tf.float32, [None, None], name="a")
        return tf.matmul(a, tf.transpose(a), name="p")
    message = _limited_run(monkeypatch, build, lambda g: {"a:0": np.zeros([1024, 0], np.float32)})
    assert message.startswith("node 'p' (MatMul): output [1024,1024] float32 would take 4.0 MiB")


@pytest.mark.parametrize("op_type", ["Sum", "Mean", "Max", "Min", "Prod"])
def test_found_reducing_an_empty_tensor_to_a_large_one(monkeypatch, op_type):
    from graphdef.ops.registry import raw_op

    def build():
        x = tf.placeholder(tf.float32, [None, None], name="x")
        return raw_op(op_type, x, np.array([0], np.int32), name="r")
    message = _limited_run(monkeypatch, build, lambda g: {"x:0": np.zeros([0, 1 << 20], np.float32)})
    assert message.startswith(f"node 'r' ({op_type}): output [1048576] float32 would take 4.0 MiB")


def test_found_gather_of_many_indices_into_large_rows(monkeypatch):
    def build():
        i = tf.placeholder(tf.int32, [None], name="i")
        return tf.gather(tf.ones([1, 4096]), i, name="g")
    message = _limited_run(monkeypatch, build, lambda g: {"i:0": np.zeros([1024], np.int32)})
    assert message.startswith("node 'g' (GatherV2): output [1024,4096] float32 would take 16.0 MiB")


# -- printing: text and --json stop at a million items, in both runners -------------------------

def _print_model(tmp_path, dims):
    text = (const("dims", shape=(len(dims),), values=dims) + const("v", "DT_FLOAT", values=(1.0,), field="float_val")
            + node("z", "Fill", ["dims", "v"], T="type: DT_FLOAT", index_type="type: DT_INT32"))
    return write_pbtxt(tmp_path, text)


@pytest.mark.slow
@pytest.mark.parametrize("dims, count", [((2 ** 24, 0, 3), "16777216"), ((2, 2 ** 19 + 1), "1048578")])
@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_found_outputs_too_large_to_print_are_refused_before_formatting(tmp_path, capsys, cc_runner, dims, count,
                                                                        json_flag):
    """An empty [2^24, 0, 3] prints 2^24 "[]" groups (the fuzzer's [2^31-1, 0, 3] ran out of memory);
    2 x 2^19 floats took seconds."""
    path = _print_model(tmp_path, dims)
    line = fails(capsys, 2, path, *json_flag, mentions=["cannot print z:0", f"would print {count} items",
                                                        "--out DIR"])
    code, stdout, stderr = run_cc(cc_runner, path, *json_flag)
    assert code == 2 and stdout == ""
    assert stderr.replace("graphrun-cc: ", "graphrun: ", 1) == line


@pytest.mark.slow
def test_a_million_items_still_print(tmp_path, capsys):
    path = _print_model(tmp_path, (2 ** 20, 0, 5))          # 2^20 empty groups: exactly the limit
    code, out, _ = graphrun(capsys, str(path))
    assert code == 0 and out.count("[]") == 2 ** 20


@pytest.mark.parametrize("control_flow", [False, True])
def test_found_an_identity_of_a_foreign_dtype_is_refused_not_looked_through(tmp_path, capsys, cc_runner,
                                                                            control_flow):
    """An Identity whose T is a dtype graphdef cannot hold was looked through as a plain pass-through:
    the plain engine returned its input's value, and the control-flow executor called the missing
    kernel ("'NoneType' object is not callable"). Both runtimes refuse it, naming the node."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        value = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x - 1.0) if control_flow else x + 1.0
        tf.identity(value, name="out")
    graph_def = g.as_graph_def()
    out = next(n for n in graph_def.node if n.name == "out")
    out.attr["T"].type = graph_pb2.DT_QUINT16_REF
    path = tmp_path / "foreign.pb"
    path.write_bytes(graph_def.SerializeToString())
    words = "quint16 tensors, which graphdef cannot hold: 'out' (Identity)"
    with tf.Session(graph=load(path)) as sess, pytest.raises(UnimplementedError) as e:
        sess.run("out:0", {"x:0": np.ones(2, np.float32)})
    assert one_line(e.value) == f"Session.run: {words}"
    fails(capsys, 3, path, "--feed", "x=[1,1]", mentions=[words])
    code, _, err = run_cc(cc_runner, path, "--feed", "x=[1,1]")
    assert (code, err.strip()) == (3, f"graphrun-cc: {path}: {words}")
