"""The op zoo: one frozen TF1 graph holding every op type an inference graph can hold."""

import numpy as np

from graphdef.framework import dtypes
from graphdef.ops import REGISTRY
from graphdef.ops.cc_pending import cc_pending
from graphdef.ops.control_flow import CONTROL_FLOW_OPS
from graphdef.ops.registry import REQUIRED

from .building import F32, Model, builder


@builder
def build_zoo(tf):
    """Elementwise, comparison, reduction and shape ops in one frozen graph, each output fetched.

    Every op type in graphdef's registry that an inference graph can hold appears at least
    once, as TensorFlow's Python API emits it (tf.where -> SelectV2, tf.compat.v1.where ->
    Select, tf.compat.v1.div -> Div ...). Placeholders have an unknown batch dimension, so
    Shape, Size and Rank stay ops instead of being folded to constants.
    """
    v1 = tf.compat.v1
    graph = tf.Graph()
    out = {}

    def keep(name, tensor):
        out[name] = tf.identity(tensor, name=f"out/{name}")

    with graph.as_default():
        x = v1.placeholder(tf.float32, [None, 6], name="x")
        y = v1.placeholder(tf.float32, [None, 6], name="y")          # positive
        n = v1.placeholder(tf.int32, [None, 6], name="n")
        d = v1.placeholder(tf.int32, [None, 6], name="d")            # nonzero
        ids = v1.placeholder(tf.int32, [None], name="ids")           # in 0..5
        img = v1.placeholder(tf.float32, [None, 5, 5, 2], name="img")
        scale = v1.placeholder_with_default(np.float32(1.5), [], name="scale")
        bias = tf.constant(np.linspace(-1, 1, 6, dtype=F32), name="bias")
        w = tf.constant(np.arange(24, dtype=F32).reshape(4, 6) / 24, name="w")

        # elementwise, float
        for name, fn in [("abs", tf.abs), ("neg", tf.negative), ("square", tf.square), ("exp", tf.exp),
                         ("sign", tf.sign), ("tanh", tf.tanh), ("sigmoid", tf.sigmoid), ("relu", tf.nn.relu),
                         ("elu", tf.nn.elu), ("softplus", tf.nn.softplus)]:
            keep(name, fn(x))
        keep("relu6", tf.nn.relu6(x * 4.0))
        keep("leaky_relu", tf.nn.leaky_relu(x, alpha=0.2))
        for name, fn in [("sqrt", tf.sqrt), ("rsqrt", tf.math.rsqrt), ("log", tf.math.log),
                         ("log1p", tf.math.log1p)]:
            keep(name, fn(y))
        keep("add_v2", x + y)
        keep("add", tf.raw_ops.Add(x=x, y=bias))
        keep("sub", x - bias)
        keep("mul", x * scale)
        keep("realdiv", x / y)
        keep("div_float", tf.raw_ops.Div(x=x, y=y))   # v1.div emits RealDiv for floats, FloorDiv for ints
        keep("floordiv_float", tf.math.floordiv(x, y * 0.3))
        keep("floormod_float", tf.math.floormod(x, y * 0.3))
        keep("maximum", tf.maximum(x, y - 1.0))
        keep("minimum", tf.minimum(x, bias))
        keep("pow", tf.pow(y, x))
        keep("squared_difference", tf.math.squared_difference(x, y))
        keep("add_n", tf.add_n([x, y, x * y]))
        keep("softmax", tf.nn.softmax(x))
        keep("log_softmax", tf.nn.log_softmax(x, axis=0))
        keep("l2_loss", tf.nn.l2_loss(x))
        keep("matmul_tb", tf.matmul(x, w, transpose_b=True))
        keep("matmul_ta", tf.matmul(x, y, transpose_a=True))
        # elementwise, integer: TensorFlow's floor division and modulo, and C-style Div
        keep("floordiv_int", tf.math.floordiv(n, d))
        keep("floormod_int", tf.math.floormod(n, d))
        keep("div_int", tf.raw_ops.Div(x=n, y=d))     # truncates toward zero, unlike FloorDiv
        keep("abs_int", tf.abs(n))
        keep("cast_to_int", tf.cast(x * 3.0, tf.int32))
        keep("cast_to_float", tf.cast(n, tf.float32))
        # comparisons and logic
        greater = tf.greater(x, y - 1.0)
        keep("equal", tf.equal(n, 0))
        keep("not_equal", tf.not_equal(n, d))
        keep("greater", greater)
        keep("greater_equal", tf.greater_equal(x, 0.0))
        keep("less", tf.less(n, d))
        keep("less_equal", tf.less_equal(x, bias))
        keep("logical", tf.logical_or(tf.logical_and(greater, tf.less(x, 0.5)), tf.logical_not(greater)))
        keep("select_v2", tf.where(greater, x, y))
        keep("select", v1.where(greater, x, -y))
        # reductions, keep_dims and negative axes
        keep("sum", tf.reduce_sum(x, axis=1))
        keep("sum_all", tf.reduce_sum(n))
        keep("mean", tf.reduce_mean(x, axis=-1, keepdims=True))
        keep("max", tf.reduce_max(x, axis=0))
        keep("min", tf.reduce_min(n, axis=[0, 1]))
        keep("prod", tf.reduce_prod(y, axis=-1, keepdims=True))
        keep("argmax", tf.argmax(x, axis=1))
        keep("argmin", tf.argmin(x, axis=-1, output_type=tf.int32))
        # shapes and layout
        keep("shape", tf.shape(x))
        keep("size", tf.size(x))
        keep("rank", tf.raw_ops.Rank(input=x))   # tf.rank folds to a Const when the rank is known
        reshaped = tf.reshape(x, [-1, 3, 2])
        keep("reshape", reshaped)
        keep("transpose", tf.transpose(reshaped, [2, 0, 1]))
        keep("expand_squeeze", tf.squeeze(tf.expand_dims(x, 1), [1]))
        keep("concat", tf.concat([x, y], axis=-1))
        keep("stack", tf.stack([x, y], axis=1))
        columns = tf.unstack(x, axis=1)
        keep("unstack", columns[0] + columns[5])
        parts = tf.split(x, 3, axis=1)
        keep("split", parts[2] - parts[0])
        sizes = tf.split(x, [1, 2, 3], axis=1)
        keep("splitv", tf.reduce_sum(sizes[2], axis=1) + sizes[0][:, 0])
        keep("slice", tf.slice(x, [0, 1], [-1, 3]))
        keep("strided_slice", x[:, ::2])
        keep("strided_slice_masks", x[1:, tf.newaxis, -2])
        keep("strided_slice_reverse", x[::-1, 4:1:-1])
        keep("tile", tf.tile(x, [2, 1]))
        keep("pad", tf.pad(x, [[1, 0], [0, 2]]))
        keep("gather", tf.gather(x, [5, 0, 2], axis=1))
        keep("gather_columns", tf.gather(y, ids, axis=-1))
        keep("one_hot", tf.one_hot(ids, depth=6))
        keep("fill", tf.fill(tf.shape(x), 2.5))
        keep("range", tf.range(0, tf.size(x), 3))
        keep("zeros_like", tf.zeros_like(x))
        keep("ones_like", tf.ones_like(n))
        keep("broadcast_to", tf.broadcast_to(bias, tf.shape(x)))
        keep("segment_sum", tf.math.unsorted_segment_sum(x, tf.math.floormod(ids, 3), num_segments=3))
        first, second = tf.identity_n([x, n])
        keep("identity_n", first * tf.cast(second, tf.float32))
        keep("stop_gradient", tf.stop_gradient(x) * 2.0)
        # rounding, trigonometry, float classes, scans, top-k, nd indexing, reversing and padding
        for name, fn in [("sin", tf.sin), ("cos", tf.cos), ("floor", tf.floor), ("ceil", tf.math.ceil),
                         ("round", tf.round), ("reciprocal", tf.math.reciprocal), ("selu", tf.nn.selu),
                         ("inv", lambda t: tf.raw_ops.Inv(x=t)), ("cumsum", lambda t: tf.cumsum(t, 1, exclusive=True)),
                         ("cumprod", lambda t: tf.math.cumprod(t, 1, reverse=True)),
                         ("reverse", lambda t: tf.reverse(t, [1])),
                         ("reflect", lambda t: tf.pad(t, [[0, 0], [2, 2]], "REFLECT")),
                         ("symmetric", lambda t: tf.pad(t, [[0, 0], [1, 3]], "SYMMETRIC")),
                         ("pad_v2", lambda t: tf.pad(t, [[0, 0], [1, 1]], constant_values=3.0))]:
            keep(name, fn(x))
        for name, fn in [("is_finite", tf.math.is_finite), ("is_nan", tf.math.is_nan), ("is_inf", tf.math.is_inf)]:
            keep(name, fn(x / y))
        top_values, top_indices = tf.math.top_k(x, 3)
        keep("top_k", top_values * tf.cast(top_indices, tf.float32))
        keep("gather_nd", tf.gather_nd(tf.transpose(x), [[1], [4]]))
        keep("scatter_nd", tf.scatter_nd([[1], [3], [1]], tf.stack([bias, bias * 2.0, w[0]]), [5, 6]))
        keep("where", tf.where(x > 0))
        # batched products, space/batch/depth moves, resizing, batch norm V2, NMS V4/V5, list bookkeeping
        m3 = tf.reshape(x, [-1, 2, 3])
        keep("batch_matmul", tf.raw_ops.BatchMatMul(x=m3, y=m3, adj_y=True))
        keep("batch_matmul_v3", tf.raw_ops.BatchMatMulV3(x=m3, y=m3, Tout=tf.float32, adj_x=True))
        corner = img[:, :4, :4, :]
        keep("space_batch", v1.batch_to_space_nd(tf.space_to_batch_nd(corner, [2, 2], [[0, 0], [0, 0]]), [2, 2],
                                                 [[0, 0], [0, 0]]))
        keep("space_depth", tf.nn.depth_to_space(tf.nn.space_to_depth(corner, 2), 2))
        resized = tf.raw_ops.ResizeNearestNeighbor(images=img, size=[7, 3], half_pixel_centers=True)
        keep("resize_nearest", resized)
        keep("resize_grads", tf.raw_ops.ResizeBilinearGrad(grads=resized, original_image=img, half_pixel_centers=True)
             + tf.raw_ops.ResizeNearestNeighborGrad(grads=resized, size=tf.shape(img)[1:3], align_corners=True))
        keep("fused_bn_v2", tf.raw_ops.FusedBatchNormV2(
            x=img, scale=tf.constant([1.0, 2.0]), offset=tf.constant([0.5, -0.5]), mean=tf.constant([0.1, 0.2]),
            variance=tf.constant([1.0, 0.5]), is_training=False)[0])
        boxes, box_scores = x[:, :4], x[:, 4]
        nms4, valid = tf.raw_ops.NonMaxSuppressionV4(boxes=boxes, scores=box_scores, max_output_size=3,
                                                     iou_threshold=0.5, score_threshold=-10.0,
                                                     pad_to_max_output_size=True)
        keep("nms_v4", nms4 + valid)
        nms5 = tf.raw_ops.NonMaxSuppressionV5(boxes=boxes, scores=box_scores, max_output_size=3, iou_threshold=0.5,
                                              score_threshold=-10.0, soft_nms_sigma=0.0)
        keep("nms_v5", tf.cast(nms5[0], tf.float32) + tf.reduce_sum(nms5[1]) + tf.cast(nms5[2], tf.float32))
        handle = tf.raw_ops.EmptyTensorList(element_shape=tf.constant([6]), max_num_elements=4,
                                            element_dtype=tf.float32)
        pushed = tf.raw_ops.TensorListPushBack(input_handle=handle, tensor=bias)
        _, popped = tf.raw_ops.TensorListPopBack(input_handle=pushed, element_shape=tf.constant([6]),
                                                 element_dtype=tf.float32)
        keep("list_bookkeeping", popped + tf.cast(tf.raw_ops.TensorListLength(input_handle=pushed), tf.float32)
             + tf.cast(tf.reduce_sum(tf.raw_ops.TensorListElementShape(input_handle=pushed, shape_type=tf.int32)),
                       tf.float32))
        with tf.control_dependencies([tf.raw_ops.ControlTrigger()]):
            keep("after_trigger", x * 2.0)
        # control inputs: a NoOp that the output waits for
        with tf.control_dependencies([tf.no_op(name="barrier")]):
            keep("after_barrier", x + 1.0)
        # windows on a small image: depthwise, explicit padding, pooling
        filt = tf.constant(np.linspace(-1, 1, 3 * 3 * 2 * 3, dtype=F32).reshape(3, 3, 2, 3), name="filter")
        keep("conv_explicit", tf.nn.conv2d(img, filt, strides=[1, 2, 1, 1],
                                           padding=[[0, 0], [1, 0], [2, 1], [0, 0]]))
        dw = tf.constant(np.linspace(1, -1, 3 * 3 * 2 * 2, dtype=F32).reshape(3, 3, 2, 2), name="depthwise_filter")
        keep("depthwise", tf.nn.depthwise_conv2d(img, dw, strides=[1, 1, 1, 1], padding="SAME"))
        keep("max_pool_same", tf.nn.max_pool2d(img, ksize=3, strides=2, padding="SAME"))
        keep("avg_pool_valid", tf.nn.avg_pool2d(img, ksize=[2, 3], strides=[1, 2], padding="VALID"))
        keep("bias_add", tf.nn.bias_add(img, tf.constant([0.5, -0.5], name="img_bias")))
        # the loss ops are stateless too: cross-entropies and their backprop outputs
        labels = tf.one_hot(ids, depth=6)
        loss, backprop = tf.raw_ops.SoftmaxCrossEntropyWithLogits(features=x, labels=labels)
        keep("softmax_xent", loss)
        keep("softmax_xent_backprop", backprop)
        sparse_loss, sparse_backprop = tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=x, labels=ids)
        keep("sparse_softmax_xent", sparse_loss)
        keep("sparse_softmax_xent_backprop", sparse_backprop)
        shape_x, shape_y = tf.raw_ops.BroadcastGradientArgs(s0=tf.shape(img), s1=tf.shape(img[:1, :, :1, :]))
        keep("broadcast_gradient_args_x", shape_x)
        keep("broadcast_gradient_args_y", shape_y)

        # issue 34's grouping and counting ops that graphrun-cc has kernels for
        cols = tf.transpose(x)                                            # [6, batch]
        for name, fn in [("segment_sum_sorted", tf.math.segment_sum), ("segment_mean", tf.math.segment_mean),
                         ("segment_max", tf.math.segment_max), ("segment_min", tf.math.segment_min),
                         ("segment_prod", tf.math.segment_prod)]:
            keep(name, fn(cols, tf.constant([0, 0, 1, 3, 3, 4])))
        for name, fn in [("unsorted_segment_max", tf.math.unsorted_segment_max),
                         ("unsorted_segment_min", tf.math.unsorted_segment_min),
                         ("unsorted_segment_prod", tf.math.unsorted_segment_prod)]:
            keep(name, fn(cols, tf.constant([3, -1, 0, 3, 1, 3]), num_segments=5))
        unique, unique_idx = tf.unique(ids)
        keep("unique", unique)
        keep("unique_idx", unique_idx)
        keep("unique_counts", tf.unique_with_counts(ids).count)
        keep("unique_v2_idx", tf.raw_ops.UniqueV2(x=n, axis=[1]).idx)
        keep("bincount", tf.raw_ops.Bincount(arr=ids, size=6, weights=tf.zeros([0])))
        keep("dense_bincount", tf.raw_ops.DenseBincount(input=tf.reshape(ids, [1, -1]), size=6,
                                                        weights=tf.zeros([0]), binary_output=False))
        for k, part in enumerate(tf.dynamic_partition(x, tf.math.floormod(ids, 3), 3)):
            keep(f"dynamic_partition_{k}", part)
        keep("div_no_nan", tf.math.divide_no_nan(x, tf.round(y)))
        keep("in_top_k", v1.math.in_top_k(x, tf.cast(tf.argmin(x, 1), tf.int32), 2))
        keep("reverse_sequence", tf.reverse_sequence(x, tf.fill(tf.shape(x)[:1], 4), seq_axis=1, batch_axis=0))
        keep("band_part", tf.linalg.band_part(w, 1, 2))
        # string ops graphrun-cc has kernels for, read back as numbers
        words = tf.constant(["", "a", "\u00e9t\u00e9", "12.5", "-3e2", "x" * 40], name="words")
        keep("string_length", tf.strings.length(words))
        keep("string_length_chars", tf.strings.length(words, unit="UTF8_CHAR"))
        keep("string_to_number", tf.strings.to_number(tf.constant(["12.5", "-3e2", " 7 ", "inf"])))
        keep("substr_length", tf.strings.length(tf.strings.substr(words, 0, 3)))

        # every other one-input float op of the registry, by TensorFlow's raw op of the same
        # name and argument: a new elementwise op joins the zoo by its definition alone
        present = {op.type for op in graph.get_operations()}
        pending = cc_pending()
        for op_type, opdef in sorted(REGISTRY.items()):
            if op_type in present or len(opdef.inputs) != 1 or len(opdef.outputs) != 1 or opdef.inputs[0].number_attr \
                    or op_type in CONTROL_FLOW_OPS \
                    or op_type in pending:  # a loop's ops only make sense inside a loop; the zoo runs in graphrun-cc
                continue
            # an attr with no default (Enter's frame_name, Einsum's equation) is not an elementwise op's
            if any(attr.default is REQUIRED for name, attr in opdef.attrs.items() if name != opdef.inputs[0].type_attr):
                continue
            type_attr = opdef.inputs[0].type_attr
            allowed = opdef.attrs[type_attr].allowed if type_attr in opdef.attrs else None
            if type_attr is None or opdef.outputs[0].type_attr != type_attr or opdef.attrs[type_attr].kind != "type" \
                    or (allowed is not None and dtypes.float32 not in allowed) or opdef.stateful:
                continue
            keep(op_type.lower(), getattr(tf.raw_ops, op_type)(**{opdef.inputs[0].name: x}))

    rng = np.random.default_rng(107)
    batch = 5
    xv = rng.normal(size=(batch, 6)).astype(F32)
    xv[0, :2] = 0.0  # sign, relu, abs and the comparisons at exactly zero
    nv = rng.integers(-9, 10, size=(batch, 6)).astype(np.int32)
    dv = rng.integers(1, 5, size=(batch, 6)).astype(np.int32) * rng.choice([-1, 1], size=(batch, 6)).astype(np.int32)
    feeds = {
        "x": xv,
        "y": rng.uniform(0.2, 2.0, size=(batch, 6)).astype(F32),
        "n": nv,
        "d": dv,
        "ids": rng.integers(0, 6, size=batch).astype(np.int32),
        "img": rng.normal(size=(2, 5, 5, 2)).astype(F32),
    }
    fetches = [t.name for t in out.values()]
    graph_def = graph.as_graph_def()   # nothing to freeze: every value is a Const already
    return Model(graph_def, feeds, fetches,
                 f"TF1 op zoo: {len(fetches)} outputs over elementwise (float and integer), comparison, "
                 "logic, reduction, shape, slicing, window and loss ops, with control inputs and a "
                 "PlaceholderWithDefault left at its default")
