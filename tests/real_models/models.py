"""The real models: what each builder makes with TensorFlow, and how it is frozen.

Every builder takes the imported `tensorflow` module and returns a Model: TensorFlow's frozen
GraphDef, seeded feeds and the fetches. tests/real_models/generate.py runs them, records
TensorFlow's answers and the tolerances, and writes the files.
"""

import os
from dataclasses import dataclass

import numpy as np

F32 = np.float32


@dataclass
class Model:
    graph_def: object      # TensorFlow's frozen GraphDef
    feeds: dict            # placeholder name -> ndarray
    fetches: list          # tensor names
    description: str


@dataclass(frozen=True)
class Builder:
    fn: object
    committed: bool        # False: too large to commit, generated into build/ by the tests


BUILDERS = {}


def builder(committed=True):
    def register(fn):
        BUILDERS[fn.__name__.removeprefix("build_")] = Builder(fn, committed)
        return fn
    return register


def import_tensorflow():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    return tf


def session_config(tf):
    return tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1,
                                    device_count={"GPU": 0})


def rng(seed):
    return np.random.default_rng(seed)


# -- freezing ---------------------------------------------------------------------------------

def freeze_function(tf, fn, specs):
    """tf.function over `specs` -> convert_variables_to_constants_v2, Keras' standard export."""
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2
    concrete = tf.function(fn, input_signature=specs).get_concrete_function()
    frozen = convert_variables_to_constants_v2(concrete)
    return frozen.graph.as_graph_def(), [t.name for t in frozen.outputs]


def randomize_keras_weights(model, seed):
    """Seeded random values for every weight, normalisation statistics included (fresh layers have
    mean 0 / variance 1, which would hide a batch norm computed wrongly)."""
    r = rng(seed)
    for w in model.weights:
        name = w.path if hasattr(w, "path") else w.name
        shape = tuple(w.shape)
        if "moving_variance" in name or name.endswith("variance"):
            value = r.uniform(0.5, 1.5, shape)
        elif "moving_mean" in name or name.endswith("/mean"):
            value = r.normal(0, 0.1, shape)
        elif "gamma" in name:
            value = r.uniform(0.8, 1.2, shape)
        elif len(shape) >= 2:
            fan_in = int(np.prod(shape[:-1]))
            value = r.normal(0, 1.0 / np.sqrt(max(fan_in, 1)), shape)
        else:
            value = r.normal(0, 0.1, shape)
        w.assign(value.astype(w.dtype if isinstance(w.dtype, str) else w.dtype.name))


def keras_model(tf, make, input_specs, seed, name_outputs=None):
    model = make()
    randomize_keras_weights(model, seed)
    specs = [tf.TensorSpec(shape, dtype, name=name) for name, shape, dtype in input_specs]
    if len(specs) == 1:
        return freeze_function(tf, lambda x: model(x, training=False), specs)
    return freeze_function(tf, lambda *xs: model(list(xs), training=False), specs)


def freeze_v1(tf, graph, outputs, init=None, before=None):
    v1 = tf.compat.v1
    with v1.Session(graph=graph, config=session_config(tf)) as sess:
        sess.run(init if init is not None else v1.global_variables_initializer())
        if before:
            before(sess)
        return v1.graph_util.convert_variables_to_constants(sess, graph.as_graph_def(), outputs)


# -- keras.applications at small sizes -----------------------------------------------------------

def image_feed(seed, shape):
    return {"image": rng(seed).uniform(-1, 1, shape).astype(F32)}


def application(tf, make, seed, size=32, batch=2):
    graph_def, outs = keras_model(tf, make, [("image", [batch, size, size, 3], tf.float32)], seed)
    return graph_def, image_feed(seed + 1000, (batch, size, size, 3)), outs


@builder()
def build_mobilenet_v2(tf):
    import keras
    gd, feeds, outs = application(tf, lambda: keras.applications.MobileNetV2(
        input_shape=(32, 32, 3), alpha=0.35, weights=None, classes=10, classifier_activation=None), 1)
    return Model(gd, feeds, outs, "keras.applications.MobileNetV2(alpha=0.35) on 32x32x3, 10 logits, Keras 3")


@builder()
def build_mobilenet_v3_small(tf):
    import keras
    gd, feeds, outs = application(tf, lambda: keras.applications.MobileNetV3Small(
        input_shape=(32, 32, 3), alpha=0.5, weights=None, include_top=False, pooling="avg"), 2)
    return Model(gd, feeds, outs, "keras.applications.MobileNetV3Small(alpha=0.5, no top, average pooling) "
                 "on 32x32x3 (hard-swish, squeeze-excite, Rescaling), Keras 3")


@builder(committed=False)
def build_efficientnet_b0(tf):
    import keras
    gd, feeds, outs = application(tf, lambda: keras.applications.EfficientNetB0(
        input_shape=(32, 32, 3), weights=None, classes=10, classifier_activation=None), 3)
    return Model(gd, feeds, outs, "keras.applications.EfficientNetB0 on 32x32x3, 10 logits, Keras 3 (16 MB)")


@builder(committed=False)
def build_densenet121(tf):
    import keras
    gd, feeds, outs = application(tf, lambda: keras.applications.DenseNet121(
        input_shape=(32, 32, 3), weights=None, classes=10, classifier_activation=None), 4)
    return Model(gd, feeds, outs, "keras.applications.DenseNet121 on 32x32x3, 10 logits, Keras 3 (28 MB)")


@builder(committed=False)
def build_nasnet_mobile(tf):
    import keras
    gd, feeds, outs = application(tf, lambda: keras.applications.NASNetMobile(
        input_shape=(32, 32, 3), weights=None, classes=10, classifier_activation=None), 5)
    return Model(gd, feeds, outs, "keras.applications.NASNetMobile on 32x32x3, 10 logits, Keras 3 (18 MB)")


@builder(committed=False)
def build_convnext_tiny(tf):
    import keras
    gd, feeds, outs = application(tf, lambda: keras.applications.ConvNeXtTiny(
        input_shape=(32, 32, 3), weights=None, classes=10, classifier_activation=None), 8)
    return Model(gd, feeds, outs, "keras.applications.ConvNeXtTiny (with its preprocessing Normalization) "
                 "on 32x32x3, 10 logits, Keras 3 (112 MB)")


@builder(committed=False)
def build_resnet50_v2(tf):
    import keras
    gd, feeds, outs = application(tf, lambda: keras.applications.ResNet50V2(
        input_shape=(32, 32, 3), weights=None, classes=10, classifier_activation=None), 9)
    return Model(gd, feeds, outs, "keras.applications.ResNet50V2 on 32x32x3, 10 logits, Keras 3 (95 MB)")


@builder()
def build_resnet_v2_small(tf):
    """ResNet50V2's structure (pre-activation bottleneck blocks, stride in the last conv,
    projection shortcuts, max-pool shortcut) at a width that fits a small file."""
    import keras
    L = keras.layers

    def block(x, filters, stride, project):
        pre = L.ReLU()(L.BatchNormalization(epsilon=1.001e-5)(x))
        if project:
            shortcut = L.Conv2D(4 * filters, 1, strides=stride)(pre)
        else:
            shortcut = L.MaxPooling2D(1, strides=stride)(x) if stride > 1 else x
        y = L.Conv2D(filters, 1, use_bias=False)(pre)
        y = L.ReLU()(L.BatchNormalization(epsilon=1.001e-5)(y))
        y = L.ZeroPadding2D(((1, 1), (1, 1)))(y)
        y = L.Conv2D(filters, 3, strides=stride, use_bias=False)(y)
        y = L.ReLU()(L.BatchNormalization(epsilon=1.001e-5)(y))
        y = L.Conv2D(4 * filters, 1)(y)
        return L.Add()([shortcut, y])

    def make():
        inputs = keras.Input((32, 32, 3))
        x = L.ZeroPadding2D(((3, 3), (3, 3)))(inputs)
        x = L.Conv2D(16, 7, strides=2)(x)
        x = L.ZeroPadding2D(((1, 1), (1, 1)))(x)
        x = L.MaxPooling2D(3, strides=2)(x)
        for filters, blocks in ((8, 2), (16, 2)):
            for i in range(blocks):
                x = block(x, filters, 2 if i == blocks - 1 else 1, i == 0)
        x = L.ReLU()(L.BatchNormalization(epsilon=1.001e-5)(x))
        x = L.GlobalAveragePooling2D()(x)
        return keras.Model(inputs, L.Dense(10)(x))
    gd, feeds, outs = application(tf, make, 6)
    return Model(gd, feeds, outs, "ResNet50V2-like: pre-activation bottlenecks, projection and max-pool "
                 "shortcuts, 2 stages of 2 blocks, on 32x32x3, Keras 3")


@builder()
def build_convnext_small(tf):
    """ConvNeXt's block (depthwise 7x7, LayerNorm, 4x MLP with GELU, layer scale, residual) and
    its patchify stem and downsampling, at a small width."""
    import keras
    L = keras.layers

    class LayerScale(L.Layer):
        def __init__(self, dim, **kw):
            super().__init__(**kw)
            self.gamma = self.add_weight(shape=(dim,), initializer="ones", name="gamma")

        def call(self, x):
            return x * self.gamma

    def block(x, dim):
        y = L.DepthwiseConv2D(7, padding="same")(x)
        y = L.LayerNormalization(epsilon=1e-6)(y)
        y = L.Dense(4 * dim)(y)
        y = L.Activation("gelu")(y)
        y = L.Dense(dim)(y)
        return L.Add()([x, LayerScale(dim)(y)])

    def make():
        inputs = keras.Input((32, 32, 3))
        x = L.Conv2D(16, 4, strides=4)(inputs)
        x = L.LayerNormalization(epsilon=1e-6)(x)
        x = block(x, 16)
        x = L.LayerNormalization(epsilon=1e-6)(x)
        x = L.Conv2D(32, 2, strides=2)(x)
        x = block(x, 32)
        x = L.GlobalAveragePooling2D()(x)
        x = L.LayerNormalization(epsilon=1e-6)(x)
        return keras.Model(inputs, L.Dense(10)(x))
    gd, feeds, outs = application(tf, make, 7)
    return Model(gd, feeds, outs, "ConvNeXt-like: patchify stem, 2 stages of one block (depthwise 7x7, "
                 "LayerNorm, Dense 4x, GELU, Dense, layer scale, residual), on 32x32x3, Keras 3")


# -- recurrent layers: Keras 3 and tf_keras ---------------------------------------------------------

SEQUENCE = (2, 5, 3)   # batch, time, features


def sequence_feed(seed):
    return {"sequence": rng(seed).normal(size=SEQUENCE).astype(F32)}


def token_feed(seed):
    tokens = rng(seed).integers(1, 20, size=(2, 6)).astype(np.int32)
    tokens[0, 4:] = 0      # padding the masks skip
    tokens[1, 2:] = 0
    return {"tokens": tokens}


def recurrent(tf, keras_module, layer, seed, label):
    L = keras_module.layers

    def make():
        inputs = keras_module.Input(SEQUENCE[1:])
        return keras_module.Model(inputs, layer(L)(inputs))
    gd, outs = keras_model(tf, make, [("sequence", list(SEQUENCE), tf.float32)], seed)
    return Model(gd, sequence_feed(seed + 1000), outs, label)


def masked_bidirectional(tf, keras_module, seed, label):
    L = keras_module.layers

    def make():
        inputs = keras_module.Input((6,), dtype="int32")
        x = L.Embedding(20, 4, mask_zero=True)(inputs)
        x = L.Bidirectional(L.LSTM(5, return_sequences=True))(x)
        x = L.Bidirectional(L.GRU(3))(x)
        return keras_module.Model(inputs, L.Dense(2)(x))
    gd, outs = keras_model(tf, make, [("tokens", [2, 6], tf.int32)], seed)
    return Model(gd, token_feed(seed + 1000), outs, label)


def tf_keras():
    import tf_keras as module
    return module


@builder()
def build_lstm(tf):
    import keras
    return recurrent(tf, keras, lambda L: L.LSTM(6, return_sequences=True), 10, "Keras 3 LSTM(6, return_sequences)")


@builder()
def build_gru(tf):
    import keras
    return recurrent(tf, keras, lambda L: L.GRU(6), 11, "Keras 3 GRU(6), last state")


@builder()
def build_simple_rnn(tf):
    import keras
    return recurrent(tf, keras, lambda L: L.SimpleRNN(6, return_sequences=True), 12, "Keras 3 SimpleRNN(6)")


@builder()
def build_bidirectional_masked(tf):
    import keras
    return masked_bidirectional(tf, keras, 13, "Keras 3 Embedding(mask_zero) -> Bidirectional LSTM -> "
                                "Bidirectional GRU -> Dense, on padded token sequences")


@builder()
def build_tf_keras_lstm(tf):
    return recurrent(tf, tf_keras(), lambda L: L.LSTM(6, return_sequences=True), 14, "tf_keras (Keras 2) LSTM(6)")


@builder()
def build_tf_keras_gru(tf):
    return recurrent(tf, tf_keras(), lambda L: L.GRU(6), 15, "tf_keras (Keras 2) GRU(6)")


@builder()
def build_tf_keras_simple_rnn(tf):
    return recurrent(tf, tf_keras(), lambda L: L.SimpleRNN(6, return_sequences=True), 16,
                     "tf_keras (Keras 2) SimpleRNN(6)")


@builder()
def build_tf_keras_bidirectional_masked(tf):
    return masked_bidirectional(tf, tf_keras(), 17, "tf_keras (Keras 2) Embedding(mask_zero) -> Bidirectional "
                                "LSTM -> Bidirectional GRU -> Dense, on padded token sequences")


# -- attention, segmentation, detection ----------------------------------------------------------

@builder()
def build_transformer_encoder(tf):
    import keras
    L = keras.layers

    def make():
        inputs = keras.Input((6, 16))
        attended = L.MultiHeadAttention(num_heads=2, key_dim=8)(inputs, inputs)
        x = L.LayerNormalization(epsilon=1e-6)(L.Add()([inputs, attended]))
        y = L.Dense(32, activation="relu")(x)
        y = L.Dense(16)(y)
        return keras.Model(inputs, L.LayerNormalization(epsilon=1e-6)(L.Add()([x, y])))
    gd, outs = keras_model(tf, make, [("sequence", [2, 6, 16], tf.float32)], 20)
    return Model(gd, {"sequence": rng(1020).normal(size=(2, 6, 16)).astype(F32)}, outs,
                 "Transformer encoder block: MultiHeadAttention(2 heads), residual, LayerNorm, FFN 32, Keras 3")


@builder()
def build_unet(tf):
    import keras
    L = keras.layers

    def make():
        inputs = keras.Input((16, 16, 3))
        c1 = L.Conv2D(8, 3, padding="same", activation="relu")(inputs)
        p1 = L.MaxPooling2D()(c1)
        c2 = L.Conv2D(16, 3, padding="same", activation="relu")(p1)
        p2 = L.MaxPooling2D()(c2)
        bottom = L.Conv2D(16, 3, padding="same", activation="relu")(p2)
        u2 = L.Conv2DTranspose(16, 2, strides=2, padding="same")(bottom)
        d2 = L.Conv2D(16, 3, padding="same", activation="relu")(L.Concatenate()([u2, c2]))
        u1 = L.UpSampling2D(2)(d2)
        d1 = L.Conv2D(8, 3, padding="same", activation="relu")(L.Concatenate()([u1, c1]))
        resized = L.Resizing(24, 24, interpolation="bilinear")(d1)
        return keras.Model(inputs, L.Conv2D(2, 1)(resized))
    gd, feeds, outs = application(tf, make, 21, size=16, batch=1)
    return Model(gd, feeds, outs, "U-Net: conv/max-pool down, Conv2DTranspose and UpSampling2D up with skip "
                 "concatenations, bilinear Resizing to 24x24, Keras 3")


@builder()
def build_detection_postprocess(tf):
    """Box decoding and non-max suppression as detection exports write them, TF1 style."""
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        boxes = v1.placeholder(tf.float32, [32, 4], name="boxes")
        logits = v1.placeholder(tf.float32, [32], name="scores")
        scores = tf.sigmoid(logits)
        corners = tf.concat([tf.minimum(boxes[:, :2], boxes[:, 2:]), tf.maximum(boxes[:, :2], boxes[:, 2:])], 1)
        keep = tf.image.non_max_suppression(corners, scores, max_output_size=8, iou_threshold=0.5,
                                            score_threshold=0.3)
        tf.identity(keep, name="selected")
        tf.identity(tf.gather(corners, keep), name="selected_boxes")
        padded, count = tf.image.non_max_suppression_padded(corners, scores, max_output_size=8,
                                                            iou_threshold=0.4, pad_to_max_output_size=True)
        tf.identity(padded, name="padded")
        tf.identity(count, name="count")
        top = tf.math.top_k(scores, k=5)
        tf.identity(top.indices, name="top_indices")
        gd = graph.as_graph_def()
    r = rng(22)
    centres = r.uniform(0, 1, (32, 2))
    sizes = r.uniform(0.05, 0.4, (32, 2))
    feeds = {"boxes": np.concatenate([centres - sizes / 2, centres + sizes / 2], 1).astype(F32),
             "scores": r.normal(size=32).astype(F32)}
    return Model(gd, feeds, ["selected:0", "selected_boxes:0", "padded:0", "count:0", "top_indices:0"],
                 "detection post-processing: sigmoid scores, corner boxes, non_max_suppression (V3), "
                 "non_max_suppression_padded, gather, top_k; a TF1 graph")


# -- TF1 graphs --------------------------------------------------------------------------------

@builder()
def build_tf1_cond_while(tf):
    """tf.compat.v1 cond and while_loop with control flow v2 disabled: Switch/Merge, Enter/Exit/
    NextIteration/LoopCond, frozen with a variable inside the loop body."""
    v1 = tf.compat.v1
    was_v2 = tf.compat.v1.control_flow_v2_enabled()
    v1.disable_control_flow_v2()
    try:
        graph = tf.Graph()
        with graph.as_default():
            x = v1.placeholder(tf.float32, [4], name="x")
            w = v1.get_variable("w", [4], initializer=v1.constant_initializer([0.5, -1.0, 2.0, 0.25]),
                                use_resource=False)
            branch = v1.cond(tf.reduce_sum(x) > 0, lambda: x * w, lambda: x - w)
            tf.identity(branch, name="branch")

            def body(i, acc):
                return i + 1, acc * 0.5 + tf.tanh(acc * w)
            _, looped = v1.while_loop(lambda i, acc: i < 5, body, [tf.constant(0), x])
            tf.identity(looped, name="looped")
        gd = freeze_v1(tf, graph, ["branch", "looped"])
    finally:
        if was_v2:
            v1.enable_control_flow_v2()
    return Model(gd, {"x": rng(30).normal(size=4).astype(F32)}, ["branch:0", "looped:0"],
                 "TF1 control flow (v2 disabled): tf.cond on the input's sum, a 5-step tf.while_loop "
                 "reading a frozen variable")


@builder()
def build_tf1_batchnorm_training_flag(tf):
    """tf.compat.v1.layers with a training placeholder: batch_normalization(training=flag) builds a
    cond between batch and moving statistics; inference feeds nothing and takes the default False.
    tf.compat.v1.layers is tf_keras' legacy_tf_layers (under Keras 3 TensorFlow refuses the alias)."""
    from tf_keras.src.legacy_tf_layers import convolutional, core, normalization

    class layers:
        conv2d, dense, flatten = convolutional.conv2d, core.dense, core.flatten
        batch_normalization = normalization.batch_normalization
    v1 = tf.compat.v1
    was_v2 = tf.compat.v1.control_flow_v2_enabled()
    v1.disable_control_flow_v2()
    try:
        graph = tf.Graph()
        with graph.as_default():
            v1.set_random_seed(31)
            image = v1.placeholder(tf.float32, [None, 8, 8, 3], name="image")
            training = v1.placeholder_with_default(False, [], name="is_training")
            h = layers.conv2d(image, 8, 3, padding="same", name="conv")
            h = layers.batch_normalization(h, training=training, name="bn")
            h = tf.nn.relu(h)
            h = layers.flatten(h)
            tf.identity(layers.dense(h, 4, name="dense"), name="logits")

            def set_statistics(sess):
                for var in v1.global_variables():
                    if "moving_mean" in var.name:
                        var.load(rng(32).normal(0, 0.1, var.shape).astype(F32), sess)
                    elif "moving_variance" in var.name:
                        var.load(rng(33).uniform(0.5, 1.5, var.shape).astype(F32), sess)
            gd = freeze_v1(tf, graph, ["logits"], before=set_statistics)
    finally:
        if was_v2:
            v1.enable_control_flow_v2()
    return Model(gd, image_feed(1031, (2, 8, 8, 3)), ["logits:0"],
                 "TF1 layers: conv2d, batch_normalization(training=placeholder_with_default(False)) "
                 "as a v1 cond, relu, flatten, dense")


@builder()
def build_tf1_fused_batchnorm_v1(tf):
    """A graph as TF 1.13 wrote it: FusedBatchNorm (V1: no U attr, five outputs), no
    exponential_avg_factor attr; rewritten from what TF 2.21 writes, since it no longer emits V1."""
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        image = v1.placeholder(tf.float32, [None, 6, 6, 4], name="image")
        r = rng(34)
        const = lambda v: tf.constant(v.astype(F32))   # noqa: E731
        kernel = const(r.normal(0, 0.3, (3, 3, 4, 4)))
        h = tf.nn.conv2d(image, kernel, strides=1, padding="SAME")
        y, _, _ = v1.nn.fused_batch_norm(h, const(r.uniform(0.8, 1.2, 4)), const(r.normal(0, 0.1, 4)),
                                         const(r.normal(0, 0.1, 4)), const(r.uniform(0.5, 1.5, 4)),
                                         epsilon=1e-3, is_training=False, name="bn")
        tf.nn.relu(y, name="out")
        gd = graph.as_graph_def()
    for node in gd.node:
        if node.op == "FusedBatchNormV3":
            node.op = "FusedBatchNorm"
            for attr in ("U", "exponential_avg_factor"):
                if attr in node.attr:
                    del node.attr[attr]
    return Model(gd, image_feed(1034, (2, 6, 6, 4)), ["out:0"],
                 "TF 1.13-style graph: Conv2D -> FusedBatchNorm (V1 op type, inference) -> Relu")
