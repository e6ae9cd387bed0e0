"""Gradient checks as a table: each differentiable op's symbolic gradient against central differences.

Every check is in float64, along a random direction; each row states the input domain
it samples (away from kinks and poles), so a failure points at one op.
"""

import numpy as np
import pytest

import graphdef as tf
from graphdef.ops import REGISTRY
from graphdef.ops.registry import NOT_DIFFERENTIABLE
from tests.python.ops34.gradient_rows import ROWS as OPS34_ROWS
from tests.python.tensor_array.gradient_rows import ROWS as TENSOR_ARRAY_ROWS

RNG_SEED = 0

# op type -> (builder over placeholder inputs, input shapes, domain (low, high) for each input
#            [, step, tolerance])
TABLE = {
    "AddV2": (lambda x, y: tf.add(x, y), [(2, 3), (3,)], [(-2, 2), (-2, 2)]),
    "Add": (lambda x, y: tf.raw_op("Add", x, y), [(2, 1), (1, 3)], [(-2, 2), (-2, 2)]),
    "Sub": (lambda x, y: x - y, [(2, 3), (2, 1)], [(-2, 2), (-2, 2)]),
    "Mul": (lambda x, y: x * y, [(3,), (2, 3)], [(-2, 2), (-2, 2)]),
    "RealDiv": (lambda x, y: x / y, [(2, 3), (3,)], [(-2, 2), (0.5, 2)]),
    "Pow": (lambda x: x ** 3.0, [(4,)], [(0.5, 2)]),
    "Neg": (lambda x: -x, [(3,)], [(-2, 2)]),
    "Square": (tf.square, [(3,)], [(-2, 2)]),
    "Sqrt": (tf.sqrt, [(3,)], [(0.5, 2)]),
    "Exp": (tf.exp, [(3,)], [(-2, 2)]),
    "Log": (tf.log, [(3,)], [(0.5, 2)]),
    "Abs": (tf.abs, [(4,)], [(0.2, 2)]),  # away from the kink at 0
    "Sigmoid": (tf.sigmoid, [(3,)], [(-3, 3)]),
    "Tanh": (tf.tanh, [(3,)], [(-2, 2)]),
    "Relu": (tf.nn.relu, [(4,)], [(0.1, 2)]),
    "Sum": (lambda x: tf.reduce_sum(x, axis=1), [(2, 3)], [(-2, 2)]),
    "Mean": (lambda x: tf.reduce_mean(x, axis=[0], keepdims=True), [(2, 3)], [(-2, 2)]),
    "MatMul": (lambda a, b: tf.matmul(a, b, transpose_b=True), [(2, 3), (4, 3)], [(-1, 1), (-1, 1)]),
    "Reshape": (lambda x: tf.reshape(x, [3, -1]), [(2, 3)], [(-2, 2)]),
    "Transpose": (lambda x: tf.transpose(x, [1, 0]), [(2, 3)], [(-2, 2)]),
    "Identity": (tf.identity, [(3,)], [(-2, 2)]),
    "Print": (lambda x: tf.Print(x, [x], message="x: ", first_n=0), [(3,)], [(-2, 2)]),  # first_n=0: prints nothing
    # through float32: linear, so a wide step keeps float32 rounding out of the difference
    "Cast": (lambda x: tf.cast(tf.cast(x, tf.float32), tf.float64), [(3,)], [(-2, 2)], 1e-2, 1e-4),
    "AddN": (lambda x, y: tf.add_n([x, y, x]), [(2,), (2,)], [(-2, 2), (-2, 2)]),
    "BroadcastTo": (lambda x: tf.broadcast_to(x, [2, 3]), [(3,)], [(-2, 2)]),
    "Fill": (lambda x: tf.fill([2, 2], x), [()], [(-2, 2)]),
    "PlaceholderWithDefault": (lambda x: tf.placeholder_with_default(x, [3]), [(3,)], [(-2, 2)]),
    # x and y drawn from disjoint ranges, so no element sits on the tie where the kink is
    "Maximum": (lambda x, y: tf.maximum(x, y), [(2, 3), (3,)], [(-2, -1), (1, 2)]),
    "Minimum": (lambda x, y: tf.minimum(x, y), [(2, 3), (2, 1)], [(1, 2), (-2, -1)]),
    "Max": (lambda x: tf.reduce_max(x, axis=1), [(2, 3)], [(-2, 2)]),  # continuous draws: no ties
    "Min": (lambda x: tf.reduce_min(x, axis=[0, 1], keepdims=True), [(2, 3)], [(-2, 2)]),
    "Log1p": (tf.log1p, [(3,)], [(-0.5, 2)]),
    "SquaredDifference": (lambda x, y: tf.squared_difference(x, y), [(2, 3), (3,)], [(-2, 2), (-2, 2)]),
    "Softmax": (tf.nn.softmax, [(2, 4)], [(-2, 2)]),
    "LogSoftmax": (tf.nn.log_softmax, [(2, 4)], [(-2, 2)]),
    # labels must be distributions (rows summing to 1): the op's gradient assumes it, as TF's does
    "SoftmaxCrossEntropyWithLogits": (
        lambda logits, raw: tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.nn.softmax(raw), logits=logits),
        [(3, 4), (3, 4)], [(-2, 2), (-2, 2)]),
    "SparseSoftmaxCrossEntropyWithLogits": (
        lambda logits: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 3, 1], logits=logits),
        [(3, 4)], [(-2, 2)]),
    "L2Loss": (tf.nn.l2_loss, [(2, 3)], [(-2, 2)]),
    "Erfc": (tf.erfc, [(4,)], [(-2, 2)]),
    "BiasAddGrad": (lambda g: tf.raw_op("BiasAddGrad", g), [(2, 3, 4)], [(-2, 2)]),
    "SelectV2": (lambda x, y: tf.where([True, False, True], x, y), [(2, 3), (3,)], [(-2, 2), (-2, 2)]),
    "Select": (lambda x, y: tf.raw_op("Select", tf.constant([True, False]), x, y), [(2, 3), (2, 3)],
               [(-2, 2), (-2, 2)]),
    # -- convolution and pooling (NHWC); strides, SAME padding and dilations all in play
    "Conv2D": (lambda x, f: tf.nn.conv2d(x, f, strides=[1, 2, 1, 1], padding="SAME"),
               [(2, 5, 4, 3), (3, 2, 3, 2)], [(-1, 1), (-1, 1)]),
    "Conv2DBackpropInput": (lambda f, dy: tf.nn.conv2d_backprop_input([2, 5, 4, 3], f, dy, [1, 2, 1, 1], "SAME"),
                            [(3, 2, 3, 2), (2, 3, 4, 2)], [(-1, 1), (-1, 1)]),
    "Conv2DBackpropFilter": (lambda x, dy: tf.nn.conv2d_backprop_filter(x, [3, 2, 3, 2], dy, [1, 2, 1, 1], "SAME"),
                             [(2, 5, 4, 3), (2, 3, 4, 2)], [(-1, 1), (-1, 1)]),
    "DepthwiseConv2dNative": (lambda x, f: tf.nn.depthwise_conv2d(x, f, [1, 1, 2, 1], "SAME", rate=[2, 1]),
                              [(2, 5, 4, 3), (2, 2, 3, 2)], [(-1, 1), (-1, 1)]),
    "MaxPool": (lambda x: tf.nn.max_pool(x, ksize=[2, 3], strides=2, padding="SAME"), [(2, 5, 4, 2)], [(-2, 2)]),
    "AvgPool": (lambda x: tf.nn.avg_pool(x, ksize=3, strides=2, padding="SAME"), [(2, 5, 4, 2)], [(-2, 2)]),
    "AvgPoolGrad": (lambda g: tf.raw_op("AvgPoolGrad", [2, 5, 4, 2], g, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1],
                                        padding="SAME"), [(2, 3, 2, 2)], [(-2, 2)]),
    "BiasAdd": (lambda x, b: tf.nn.bias_add(x, b), [(2, 3, 4), (4,)], [(-2, 2), (-2, 2)]),
    # float32 only, as in TF: a wider step keeps float32 rounding out of the difference
    "FusedBatchNormV3": (lambda x, s, o, m, v: tf.cast(tf.nn.fused_batch_norm(
        *[tf.cast(t, tf.float32) for t in (x, s, o, m, v)], is_training=False)[0], tf.float64),
        [(2, 2, 3, 3), (3,), (3,), (3,), (3,)], [(-2, 2), (0.5, 2), (-1, 1), (-1, 1), (0.5, 2)], 3e-3, 1e-3),
    # -- activations (random draws never land on the kinks at 0 and 6)
    "Relu6": (tf.nn.relu6, [(8,)], [(-2, 8)]),
    "Elu": (tf.nn.elu, [(6,)], [(-2, 2)]),
    "LeakyRelu": (lambda x: tf.nn.leaky_relu(x, alpha=0.3), [(6,)], [(-2, 2)]),
    "Softplus": (tf.nn.softplus, [(6,)], [(-3, 3)]),
    "Rsqrt": (tf.rsqrt, [(3,)], [(0.5, 2)]),
    "Div": (lambda x, y: tf.raw_op("Div", x, y), [(2, 3), (3,)], [(-2, 2), (0.5, 2)]),
    # x / y stays within (2.4, 2.9), away from the jumps of floor(x / y)
    "FloorMod": (lambda x, y: x % y, [(2, 3), (3,)], [(5.2, 5.8), (2.0, 2.1)]),
    # -- rearranging, slicing and indexing
    "Squeeze": (lambda x: tf.squeeze(x, [1]), [(2, 1, 3)], [(-2, 2)]),
    "ExpandDims": (lambda x: tf.expand_dims(x, -1), [(2, 3)], [(-2, 2)]),
    "ConcatV2": (lambda x, y: tf.concat([x, y, x], axis=-1), [(2, 3), (2, 2)], [(-2, 2), (-2, 2)]),
    "Pack": (lambda x, y: tf.stack([x, y], axis=1), [(2, 3), (2, 3)], [(-2, 2), (-2, 2)]),
    "Unpack": (lambda x: (lambda a, b, c: a * b - c)(*tf.unstack(x, axis=1)), [(2, 3, 2)], [(-2, 2)]),
    "Split": (lambda x: (lambda a, b: a * b)(*tf.split(x, 2, axis=1)), [(2, 4)], [(-2, 2)]),
    "SplitV": (lambda x: (lambda a, b, c: a * tf.reduce_sum(b * b, axis=1, keepdims=True) + c[:, :1])(
        *tf.split(x, [1, -1, 2], axis=1)), [(2, 6)], [(-2, 2)]),
    "Slice": (lambda x: tf.slice(x, [1, 0], [2, -1]), [(3, 4)], [(-2, 2)]),
    "StridedSlice": (lambda x: x[1:, ::-2, None, 0], [(3, 4, 2)], [(-2, 2)]),
    "StridedSliceGrad": (lambda dy: tf.raw_op("StridedSliceGrad", [3, 4, 2], [1, 0, 0, 0], [0, 0, 0, 1],
                                              [1, -2, 1, 1], dy, end_mask=3, begin_mask=2, new_axis_mask=4,
                                              shrink_axis_mask=8), [(2, 2, 1)], [(-2, 2)]),
    "Tile": (lambda x: tf.tile(x, [2, 1, 3]), [(2, 3, 1)], [(-2, 2)]),
    "Pad": (lambda x: tf.pad(x, [[1, 0], [0, 2]]), [(2, 3)], [(-2, 2)]),
    "GatherV2": (lambda p: tf.gather(p, [[2, 0], [2, 2]], axis=1), [(2, 3, 2)], [(-2, 2)]),  # repeats accumulate
    "UnsortedSegmentSum": (lambda d: tf.unsorted_segment_sum(d, [1, -1, 1, 0], 3), [(4, 2)], [(-2, 2)]),
    "IdentityN": (lambda x, y: (lambda a, b: a * b)(*tf.identity_n([x, y])), [(3,), (3,)], [(-2, 2), (-2, 2)]),
    # control flow: a cond taking its true branch (Switch) and one taking its false branch (Merge)
    "Switch": (lambda x, y: tf.cond(tf.reduce_sum(x) > -100.0, lambda: x * y, lambda: x), [(3,), (3,)],
               [(-2, 2), (-2, 2)]),
    "Merge": (lambda x, y: tf.cond(tf.reduce_sum(x) > 100.0, lambda: x, lambda: tf.tanh(x) * y), [(3,), (3,)],
              [(-2, 2), (-2, 2)]),
    # a while loop is differentiated as a whole (ops/while_gradients.py): one row per op type it holds
    **{op_type: (lambda x, y: tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, tf.tanh(v) * y + x),
                                             [0, x])[1], [(3,), (3,)], [(-2, 2), (-1, 1)])
       for op_type in ("Enter", "Exit", "NextIteration")},
    # -- moving blocks between space, batch and depth (graphdef/ops/space_batch.py)
    "SpaceToBatchND": (lambda x: tf.space_to_batch_nd(x, [2, 2], [[1, 0], [0, 1]]), [(1, 3, 3, 2)], [(-2, 2)]),
    "BatchToSpaceND": (lambda x: tf.batch_to_space_nd(x, [2, 1], [[1, 0], [0, 0]]), [(2, 2, 3, 1)], [(-2, 2)]),
    "SpaceToDepth": (lambda x: tf.space_to_depth(x, 2), [(1, 2, 4, 1)], [(-2, 2)]),
    "DepthToSpace": (lambda x: tf.depth_to_space(x, 2), [(1, 1, 2, 4)], [(-2, 2)]),
    # -- resizing (graphdef/ops/image.py): gradients are Einsums with constant interpolation matrices
    # computed in float32 and linear: a wide step keeps float32 rounding out of the difference
    "ResizeBilinear": (lambda x: tf.cast(tf.image.resize_bilinear(x, [5, 3], half_pixel_centers=True), tf.float64),
                       [(1, 3, 4, 2)], [(-2, 2)], 3e-2, 1e-4),
    "ResizeNearestNeighbor": (lambda x: tf.image.resize_nearest_neighbor(x, [5, 3], align_corners=True),
                              [(1, 3, 4, 2)], [(-2, 2)]),
    # -- batched products and Einsum (graphdef/ops/linalg.py, einsum.py)
    "BatchMatMul": (lambda x, y: tf.raw_op("BatchMatMul", x, y, adj_y=True), [(2, 3, 4), (2, 5, 4)],
                    [(-1, 1), (-1, 1)]),
    "BatchMatMulV2": (lambda x, y: tf.raw_op("BatchMatMulV2", x, y, adj_x=True), [(2, 1, 4, 3), (3, 4, 2)],
                      [(-1, 1), (-1, 1)]),
    "BatchMatMulV3": (lambda x, y: tf.raw_op("BatchMatMulV3", x, y, Ta=tf.float64, Tb=tf.float64, Tout=tf.float64),
                      [(3, 2, 4), (1, 4, 2)], [(-1, 1), (-1, 1)]),
    "Einsum": (lambda x, y: tf.einsum("abc,cd->ad", x, y), [(2, 3, 4), (4, 5)], [(-1, 1), (-1, 1)]),
    "FusedBatchNorm": (lambda x, s, o: tf.cast(tf.raw_op("FusedBatchNorm", *[tf.cast(t, tf.float32) for t in (
        x, s, o)], tf.constant(np.zeros(0, np.float32)), tf.constant(np.zeros(0, np.float32)))[0], tf.float64),
        [(2, 2, 3, 3), (3,), (3,)], [(-2, 2), (0.5, 2), (-1, 1)], 3e-3, 1e-3),
    "FusedBatchNormV2": (lambda x, s, o, m, v: tf.cast(tf.raw_op("FusedBatchNormV2", *[tf.cast(t, tf.float32) for t in (
        x, s, o, m, v)], is_training=False, U=tf.float32)[0], tf.float64),
        [(2, 2, 3, 3), (3,), (3,), (3,), (3,)], [(-2, 2), (0.5, 2), (-1, 1), (-1, 1), (0.5, 2)], 3e-3, 1e-3),
    # -- reciprocals (a pole at 0), scans, TopK, reversing, mirror and constant padding, nd indexing
    "Reciprocal": (tf.reciprocal, [(4,)], [(0.5, 2)]),
    "Inv": (lambda x: tf.raw_op("Inv", x), [(4,)], [(-2, -0.5)]),
    "Cumsum": (lambda x: tf.cumsum(x, 1, exclusive=True) * tf.cumsum(x, 0, reverse=True), [(3, 4)], [(-2, 2)]),
    "Cumprod": (lambda x: tf.math.cumprod(x, 1, reverse=True) + tf.math.cumprod(x, 0, exclusive=True), [(3, 4)],
                [(0.5, 2)]),  # TF's formula divides by x: away from 0
    "TopKV2": (lambda x: tf.nn.top_k(x, 3)[0], [(2, 5)], [(-2, 2)]),  # continuous draws: no ties
    "ReverseV2": (lambda x: tf.reverse(x, [0, -1]) * x, [(2, 3)], [(-2, 2)]),
    "PadV2": (lambda x: tf.pad(x, [[1, 0], [2, 1]], constant_values=0.5), [(2, 3)], [(-2, 2)]),
    "MirrorPad": (lambda x: tf.pad(x, [[1, 2], [2, 1]], "REFLECT") + tf.pad(x, [[1, 2], [2, 1]], "SYMMETRIC") ** 2,
                  [(3, 3)], [(-2, 2)]),
    "GatherNd": (lambda p: tf.gather_nd(p, [[1, 0], [0, 2], [1, 0]]), [(2, 3, 2)], [(-2, 2)]),  # repeats add up
    "ScatterNd": (lambda u: tf.scatter_nd([[2], [0], [2]], u, [4, 3]), [(3, 3)], [(-2, 2)]),
}


def _smooth_unary_rows():
    """A row for each one-input float op without its own: smooth on (-2, 2), checked there.

    A new elementwise op is covered by its definition alone; ops with kinks or poles in that
    range (Abs, Relu, Log, Sqrt...) have rows of their own above, with their domains.
    """
    rows = {}
    for op_type, opdef in REGISTRY.items():
        if op_type in TABLE or opdef.grad is NOT_DIFFERENTIABLE or opdef.grad is None:
            continue
        if len(opdef.inputs) != 1 or len(opdef.outputs) != 1 or opdef.inputs[0].type_attr is None:
            continue
        allowed = opdef.attrs[opdef.inputs[0].type_attr].allowed
        if allowed is not None and tf.float64 not in allowed:
            continue
        rows[op_type] = ((lambda t: lambda x: tf.raw_op(t, x))(op_type), [(6,)], [(-2, 2)])
    return rows


TABLE.update(OPS34_ROWS)
TABLE.update(TENSOR_ARRAY_ROWS)
TABLE.update(_smooth_unary_rows())


def _check(op_type):
    build, shapes, domains, *step = TABLE[op_type]
    eps, tolerance = step or (1e-6, 1e-6)
    rng = np.random.default_rng(RNG_SEED)
    g = tf.Graph()
    with g.as_default():
        xs = [tf.placeholder(tf.float64, shape) for shape in shapes]
        y = build(*xs)
        assert any(op.type == op_type for op in g.get_operations()), f"the row builds no {op_type}"
        weights = tf.constant(rng.normal(size=y.shape.as_list()))
        loss = tf.reduce_sum(y * weights)  # a random direction through y
        grads = tf.gradients(loss, xs)
    values = [rng.uniform(lo, hi, size=shape) for shape, (lo, hi) in zip(shapes, domains)]
    with tf.Session(graph=g) as sess:
        feed = dict(zip(xs, values))
        symbolic = sess.run(grads, feed)
        for i, (value, grad) in enumerate(zip(values, symbolic)):
            direction = rng.normal(size=np.shape(value))
            plus = sess.run(loss, {**feed, xs[i]: value + eps * direction})
            minus = sess.run(loss, {**feed, xs[i]: value - eps * direction})
            numeric = (plus - minus) / (2 * eps)
            analytic = float(np.sum(grad * direction))
            assert abs(numeric - analytic) <= tolerance * max(1.0, abs(numeric)), (
                f"{op_type} input {i}: symbolic {analytic} vs central difference {numeric}")


@pytest.mark.parametrize("op_type", sorted(TABLE))
def test_gradient_matches_central_differences(op_type):
    _check(op_type)


def test_every_op_has_a_gradient_row_or_says_it_has_none():
    unaccounted = [t for t, d in REGISTRY.items()
                   if d.grad is not NOT_DIFFERENTIABLE and t not in TABLE
                   and t not in ("Prod",)]  # its gradient (zeros need a cumulative product) is still to come
    assert not unaccounted, f"ops with a gradient but no gradient-check row: {unaccounted}"


def test_gradient_of_unrelated_variable_is_none_and_stop_gradient_blocks():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float64, [], name="x")
        unrelated = tf.placeholder(tf.float64, [], name="u")
        y = x * x + tf.stop_gradient(x * 3.0)
        gx, gu = tf.gradients(y, [x, unrelated])
        assert gu is None
    with tf.Session(graph=g) as sess:
        assert sess.run(gx, {x: 2.0}) == 4.0  # the stopped branch contributes nothing


def test_fan_out_sums_gradients():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float64, [], name="x")
        y = x * x * x + x  # x used four times
        (gx,) = tf.gradients(y, [x])
    with tf.Session(graph=g) as sess:
        assert sess.run(gx, {x: 2.0}) == 13.0


def test_missing_gradient_names_the_op():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float64, [2], name="x")
        y = tf.reduce_prod(x, axis=0, name="loss_prod")
        with pytest.raises(LookupError, match=r"no gradient for 'loss_prod' \(Prod\)"):
            tf.gradients(y, [x])


@pytest.mark.slow
def test_minimize_fits_the_seed_linear_model():
    g = tf.Graph()
    rng = np.random.default_rng(1)
    scores = rng.uniform(0, 20, 40)
    iq = 4.0 * scores + 70 + rng.normal(0, 1, 40)
    with g.as_default():
        x = tf.placeholder(tf.float64, name="x")
        y = tf.placeholder(tf.float64, name="y")
        w = tf.Variable(0.5, dtype=tf.float64, name="w")
        b = tf.Variable(0.1, dtype=tf.float64, name="b")
        loss = tf.reduce_mean(tf.square(w * x + b - y))
        train = tf.train.GradientDescentOptimizer(0.005).minimize(loss)
        init = tf.variables_initializer([w, b])
    with tf.Session(graph=g) as sess:
        sess.run(init)
        for _ in range(20000):
            sess.run(train, {x: scores, y: iq})
        slope, intercept = np.polyfit(scores, iq, 1)
        np.testing.assert_allclose(sess.run([w, b]), [slope, intercept], rtol=1e-4)


def test_minimize_without_trainable_dependence_is_an_error():
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(1.0, name="w")
        loss = tf.constant(2.0) * 3.0
        with pytest.raises(ValueError, match="no gradients for any variable"):
            tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=[w])
