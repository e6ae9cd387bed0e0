"""Builds, briefly trains and freezes small models with real TensorFlow; writes tests/tf_models/<name>/.

    .venv/bin/python -m tests.tf_models.generate            # rewrite every model directory
    .venv/bin/python -m tests.tf_models.generate mlp cnn    # only these

Unlike tests/conformance (graphs built here, answers from numpy), these graphs are made by
TensorFlow the way users make them, tf.compat.v1 layers, Keras 3 and both freezing paths,
so they carry whatever TensorFlow really writes: `<var>/read` Identity nodes, `_class`
attrs, former ReadVariableOps, Keras' NoOp sink, dropout residue. The answers come from
TensorFlow too: each frozen file is read back from its bytes into a fresh TensorFlow graph
and run on the committed feeds, so the expected values belong to exactly the bytes
committed.

Each directory holds the files tests/conformance/replay.py reads (model.pb, feed_*.npy,
expected_*.npy, case.json), so the same replay helpers judge every runtime. case.json adds
"ops", the file's op census (op type -> node count), and "made_with", the versions used.
Training is seeded, single-threaded and deterministic, so a rerun with the same versions
writes the same numbers; the committed files are what the suite checks, with or without
TensorFlow installed.
"""

import argparse
import collections
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphdef._proto import graph_pb2
from graphdef.framework import dtypes
from graphdef.ops import REGISTRY
from tests.conformance import replay
from tests.conformance.generate import file_stem

ROOT = Path(__file__).resolve().parent
REGENERATE = ".venv/bin/python -m tests.tf_models.generate"
F32 = np.float32


@dataclass
class Model:
    """What a builder hands back: TensorFlow's frozen GraphDef and how to run it."""
    graph_def: object      # a tensorflow GraphDef message
    feeds: dict            # placeholder name -> ndarray
    fetches: list          # tensor names ("node:0")
    description: str


BUILDERS = {}


def builder(fn):
    BUILDERS[fn.__name__.removeprefix("build_")] = fn
    return fn


# -- shared pieces ---------------------------------------------------------------------------

def session_config(tf):
    """One thread each way, so reductions run in one order and reruns give the same numbers."""
    return tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1,
                                    device_count={"GPU": 0})


def classification_data(seed, shape, classes, n):
    """Inputs from a normal distribution, labels from a fixed random projection: learnable, not trivial."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, *shape)).astype(F32)
    projection = rng.normal(size=(int(np.prod(shape)), classes))
    labels = np.argmax(x.reshape(n, -1) @ projection, axis=1).astype(np.int32)
    return x, labels


def train_and_freeze(tf, graph, init, train, feeds, steps, outputs, before_freeze=None):
    """Runs `init`, `steps` training steps on `feeds`, then TF1's convert_variables_to_constants."""
    v1 = tf.compat.v1
    with v1.Session(graph=graph, config=session_config(tf)) as sess:
        sess.run(init)
        for _ in range(steps):
            sess.run(train, feeds)
        if before_freeze:
            before_freeze(sess)
        return v1.graph_util.convert_variables_to_constants(sess, graph.as_graph_def(), outputs)


def variable(tf, name, shape, resource, initializer=None):
    """tf.compat.v1.get_variable, as a RefVariable (VariableV2) or a resource variable (VarHandleOp).

    Freezing turns both into a Const, but they leave different nodes behind (`name/read` vs
    `.../ReadVariableOp` Identities), and real files have both.
    """
    return tf.compat.v1.get_variable(name, shape, initializer=initializer, use_resource=resource)


def conv_layer(tf, x, name, kernel, channels_out, resource, bias=True, **conv_args):
    """tf.nn.conv2d (+ bias_add) with glorot-initialised weights, as TF1 layer code wrote it."""
    with tf.compat.v1.variable_scope(name):
        w = variable(tf, "kernel", [kernel, kernel, int(x.shape[-1]), channels_out], resource)
        y = tf.nn.conv2d(x, w, **conv_args)
        if bias:
            b = variable(tf, "bias", [channels_out], resource, tf.compat.v1.zeros_initializer())
            y = tf.nn.bias_add(y, b)
        return y


def dense_layer(tf, x, name, units, resource, output_name=None):
    """matmul + bias_add; `output_name` names the BiasAdd node, so a test can fetch it."""
    with tf.compat.v1.variable_scope(name):
        w = variable(tf, "kernel", [int(x.shape[-1]), units], resource)
        b = variable(tf, "bias", [units], resource, tf.compat.v1.zeros_initializer())
    return tf.nn.bias_add(tf.matmul(x, w), b, name=output_name)


def classifier_head(tf, logits, labels_name="labels"):
    """softmax `probs`, and the loss and Adam step that train the graph (pruned away when frozen)."""
    v1 = tf.compat.v1
    probs = tf.nn.softmax(logits, name="probs")
    labels = v1.placeholder(tf.int32, [None], name=labels_name)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    train = v1.train.AdamOptimizer(0.01).minimize(loss)
    return probs, labels, train


# -- the models ------------------------------------------------------------------------------

@builder
def build_mlp(tf):
    """TF1 MLP: matmul + bias_add + relu, then matmul + bias_add + softmax."""
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(1)
        x = v1.placeholder(tf.float32, [None, 20], name="x")
        # RefVariables for the first layer, resource variables for the second: both freeze paths
        hidden = tf.nn.relu(dense_layer(tf, x, "dense1", 32, resource=False), name="dense1/relu")
        logits = dense_layer(tf, hidden, "dense2", 10, resource=True, output_name="logits")
        _, labels, train = classifier_head(tf, logits)
        init = v1.global_variables_initializer()
    data, targets = classification_data(1, (20,), 10, 256)
    frozen = train_and_freeze(tf, graph, init, train, {x: data, labels: targets}, 40, ["probs"])
    feeds = {"x": np.random.default_rng(101).normal(size=(8, 20)).astype(F32)}
    return Model(frozen, feeds, ["logits:0", "probs:0"],
                 "TF1 MLP 20-32-10 (tf.matmul, tf.nn.bias_add, relu, softmax), Adam 40 steps, "
                 "RefVariable and resource-variable layers frozen with convert_variables_to_constants")


@builder
def build_cnn(tf):
    """TF1 CNN: Conv2D, BiasAdd, Relu, MaxPool, AvgPool, Reshape, MatMul, Softmax."""
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(2)
        x = v1.placeholder(tf.float32, [None, 28, 28, 1], name="image")
        h = tf.nn.relu(conv_layer(tf, x, "conv1", 5, 8, False, strides=1, padding="SAME"))
        h = tf.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID", name="pool1")           # 14x14
        h = tf.nn.relu(conv_layer(tf, h, "conv2", 3, 16, False, strides=1, padding="SAME"))
        h = tf.nn.avg_pool2d(h, ksize=3, strides=2, padding="SAME", name="pool2")            # 7x7
        flat = tf.reshape(h, [-1, 7 * 7 * 16], name="flatten")
        logits = dense_layer(tf, flat, "dense", 10, resource=False, output_name="logits")
        _, labels, train = classifier_head(tf, logits)
        init = v1.global_variables_initializer()
    data, targets = classification_data(2, (28, 28, 1), 10, 128)
    frozen = train_and_freeze(tf, graph, init, train, {x: data, labels: targets}, 15, ["probs"])
    feeds = {"image": np.random.default_rng(102).normal(size=(4, 28, 28, 1)).astype(F32)}
    return Model(frozen, feeds, ["logits:0", "probs:0"],
                 "TF1 CNN on 28x28x1: conv 5x5x8 SAME + bias + relu, max pool 2/2 VALID, conv 3x3x16 "
                 "SAME + bias + relu, avg pool 3/2 SAME, reshape, dense 10, softmax; Adam 15 steps")


@builder
def build_cnn_batchnorm(tf):
    """TF1 CNN with inference batch norm (FusedBatchNormV3), a dilated and a strided conv."""
    v1 = tf.compat.v1
    graph = tf.Graph()
    norms = []

    def batch_norm(y, name):
        """fused_batch_norm(is_training=False): trained scale/offset, statistics set from data below."""
        channels = int(y.shape[-1])
        with v1.variable_scope(name):
            scale = variable(tf, "gamma", [channels], False, v1.ones_initializer())
            offset = variable(tf, "beta", [channels], False, v1.zeros_initializer())
            mean = v1.get_variable("moving_mean", [channels], initializer=v1.zeros_initializer(),
                                   trainable=False, use_resource=False)
            var = v1.get_variable("moving_variance", [channels], initializer=v1.ones_initializer(),
                                  trainable=False, use_resource=False)
        out, _, _ = v1.nn.fused_batch_norm(y, scale, offset, mean, var, epsilon=1e-3, is_training=False,
                                           name=f"{name}/FusedBatchNorm")
        batch_mean, batch_var = tf.nn.moments(y, axes=[0, 1, 2])
        norms.append((v1.assign(mean, batch_mean), v1.assign(var, batch_var)))
        return out

    with graph.as_default():
        v1.set_random_seed(3)
        x = v1.placeholder(tf.float32, [None, 16, 16, 3], name="image")
        h = conv_layer(tf, x, "conv1", 3, 8, False, bias=False, strides=1, padding="VALID", dilations=2)  # 12
        h = tf.nn.relu(batch_norm(h, "bn1"))
        h = tf.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID", name="pool1")              # 6x6
        h = conv_layer(tf, h, "conv2", 3, 16, False, bias=False, strides=2, padding="SAME")       # 3x3
        h = tf.nn.relu(batch_norm(h, "bn2"))
        h = tf.nn.avg_pool2d(h, ksize=3, strides=1, padding="SAME", name="pool2")               # 3x3
        flat = tf.reshape(h, [-1, 3 * 3 * 16], name="flatten")
        logits = dense_layer(tf, flat, "dense", 5, resource=False, output_name="logits")
        _, labels, train = classifier_head(tf, logits)
        init = v1.global_variables_initializer()
    data, targets = classification_data(3, (16, 16, 3), 5, 128)
    feeds = {x: data, labels: targets}

    def set_statistics(sess):
        """The running mean and variance a full training run would have converged to: the data's."""
        for assign_mean, assign_var in norms:   # in order: bn2's input depends on bn1's statistics
            sess.run([assign_mean, assign_var], feeds)

    frozen = train_and_freeze(tf, graph, init, train, feeds, 15, ["probs"], before_freeze=set_statistics)
    test = {"image": np.random.default_rng(103).normal(size=(4, 16, 16, 3)).astype(F32)}
    return Model(frozen, test, ["logits:0", "probs:0"],
                 "TF1 CNN with batch norm on 16x16x3: conv 3x3x8 dilated 2 VALID, fused_batch_norm "
                 "(is_training=False: FusedBatchNormV3), relu, max pool, conv 3x3x16 stride 2 SAME, "
                 "batch norm, relu, avg pool 3/1 SAME, dense 5, softmax; Adam 15 steps, statistics from data")


def freeze_keras(tf, model, input_spec):
    """TF2's path: a tf.function of the model in inference mode, frozen by convert_variables_to_constants_v2."""
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2
    fn = tf.function(lambda x: model(x, training=False)).get_concrete_function(input_spec)
    return convert_variables_to_constants_v2(fn).graph.as_graph_def()


def keras_fit(tf, keras, model, x, y, epochs):
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy")
    model.fit(x, y, batch_size=32, epochs=epochs, verbose=0, shuffle=False)


@builder
def build_keras_cnn(tf):
    """Keras 3 Sequential CNN (batch norm, dropout) frozen to a GraphDef."""
    import keras
    from keras import layers
    keras.backend.clear_session()   # fresh layer names, whatever ran before
    keras.utils.set_random_seed(4)
    model = keras.Sequential([
        keras.Input((12, 12, 1)),
        layers.Conv2D(6, 3, activation="relu"),                  # 10x10
        layers.BatchNormalization(),
        layers.MaxPooling2D(2),                                  # 5x5
        layers.Conv2D(8, 3, padding="same", activation="relu"),
        layers.AveragePooling2D(2, padding="same"),              # 3x3
        layers.Flatten(),
        layers.Dense(16, activation="relu"),
        layers.Dropout(0.25),                                    # gone at inference
        layers.Dense(4, activation="softmax"),
    ])
    data, targets = classification_data(4, (12, 12, 1), 4, 128)
    keras_fit(tf, keras, model, data, targets, epochs=3)
    graph_def = freeze_keras(tf, model, tf.TensorSpec([None, 12, 12, 1], tf.float32, name="image"))
    feeds = {"image": np.random.default_rng(104).normal(size=(4, 12, 12, 1)).astype(F32)}
    return Model(graph_def, feeds, ["Identity:0"],
                 "Keras 3 Sequential CNN (Conv2D relu, BatchNormalization, MaxPooling2D, Conv2D SAME, "
                 "AveragePooling2D SAME, Flatten, Dense relu, Dropout, Dense softmax), fit 3 epochs, "
                 "frozen with convert_variables_to_constants_v2")


@builder
def build_keras_sequence(tf):
    """Keras 3 on sequences: Dense on a rank-3 input and gelu, as transformer blocks have them."""
    import keras
    from keras import layers
    keras.backend.clear_session()
    keras.utils.set_random_seed(5)
    model = keras.Sequential([
        keras.Input((6, 8)),
        layers.Dense(16, activation="gelu"),
        layers.LayerNormalization(),
        layers.GlobalAveragePooling1D(),
        layers.Dense(3, activation="softmax"),
    ])
    data, targets = classification_data(5, (6, 8), 3, 128)
    keras_fit(tf, keras, model, data, targets, epochs=3)
    graph_def = freeze_keras(tf, model, tf.TensorSpec([None, 6, 8], tf.float32, name="tokens"))
    feeds = {"tokens": np.random.default_rng(105).normal(size=(4, 6, 8)).astype(F32)}
    return Model(graph_def, feeds, ["Identity:0"],
                 "Keras 3 sequence classifier: Dense(16, gelu) on [batch, 6, 8], LayerNormalization, "
                 "GlobalAveragePooling1D, Dense softmax; fit 3 epochs, frozen with "
                 "convert_variables_to_constants_v2")


@builder
def build_cnn_dropout(tf):
    """A TF1 CNN frozen with its dropout: keep_prob a PlaceholderWithDefault of 1.0, as tutorials did."""
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(6)
        x = v1.placeholder(tf.float32, [None, 8, 8, 1], name="image")
        keep_prob = v1.placeholder_with_default(1.0, [], name="keep_prob")
        h = tf.nn.relu(conv_layer(tf, x, "conv", 3, 4, False, strides=1, padding="SAME"))
        h = tf.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID", name="pool")              # 4x4
        flat = tf.reshape(h, [-1, 4 * 4 * 4], name="flatten")
        dropped = tf.nn.dropout(flat, rate=1.0 - keep_prob, name="dropout")
        logits = dense_layer(tf, dropped, "dense", 3, resource=False, output_name="logits")
        _, labels, train = classifier_head(tf, logits)
        init = v1.global_variables_initializer()
    data, targets = classification_data(6, (8, 8, 1), 3, 64)
    frozen = train_and_freeze(tf, graph, init, train, {x: data, labels: targets, keep_prob: 0.5}, 10, ["probs"])
    feeds = {"image": np.random.default_rng(106).normal(size=(4, 8, 8, 1)).astype(F32)}
    return Model(frozen, feeds, ["probs:0"],
                 "TF1 CNN with tf.nn.dropout on a keep_prob PlaceholderWithDefault(1.0): the frozen "
                 "file keeps dropout's RandomUniform/GreaterEqual/SelectV2, deterministic at keep_prob 1")


@builder
def build_gradients(tf):
    """TensorFlow's own backward pass of a small CNN, frozen: the gradient ops as TF emits them.

    tf.gradients of a cross-entropy through dense, reshape, strided slice, pooling, relu,
    bias_add and conv layers, with respect to the image and to every weight; the weights
    are frozen to Consts, so the file computes the gradients of a trained model for a batch.
    """
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(8)
        x = v1.placeholder(tf.float32, [None, 8, 8, 2], name="image")
        labels = v1.placeholder(tf.int32, [None], name="labels")
        conv = conv_layer(tf, x, "conv", 3, 4, False, strides=1, padding="SAME")
        h = tf.nn.relu(conv)
        h = tf.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID", name="pool1")             # 4x4
        h = tf.nn.avg_pool2d(h, ksize=2, strides=1, padding="SAME", name="pool2")              # 4x4
        h = h[:, 1:, :, :]                                                                      # 3x4
        flat = tf.reshape(h, [-1, 3 * 4 * 4], name="flatten")
        logits = dense_layer(tf, flat, "dense", 3, resource=False, output_name="logits")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits),
                              name="loss")
        weights = [v for v in v1.global_variables()]
        grads = tf.gradients(loss, [x] + weights)
        names = ["image"] + [v.op.name for v in weights]
        outputs = [tf.identity(g, name=f"grad/{n}") for g, n in zip(grads, names)]
        train = v1.train.GradientDescentOptimizer(0.1).minimize(loss)
        init = v1.global_variables_initializer()
    data, targets = classification_data(8, (8, 8, 2), 3, 64)
    frozen = train_and_freeze(tf, graph, init, train, {x: data, labels: targets}, 10,
                              ["loss"] + [t.op.name for t in outputs])
    rng = np.random.default_rng(108)
    feeds = {"image": rng.normal(size=(4, 8, 8, 2)).astype(F32),
             "labels": rng.integers(0, 3, size=4).astype(np.int32)}
    return Model(frozen, feeds, ["loss:0"] + [t.name for t in outputs],
                 "TF1 tf.gradients of a small CNN's mean sparse cross-entropy with respect to the image "
                 "and every weight (conv, bias_add, relu, max pool, avg pool, strided slice, reshape, "
                 "dense), weights frozen after 10 steps of gradient descent")


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

        # every other one-input float op of the registry, by TensorFlow's raw op of the same
        # name and argument: a new elementwise op joins the zoo by its definition alone
        present = {op.type for op in graph.get_operations()}
        for op_type, opdef in sorted(REGISTRY.items()):
            if op_type in present or len(opdef.inputs) != 1 or len(opdef.outputs) != 1:
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


# -- writing ---------------------------------------------------------------------------------

def import_tensorflow():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before the import, to quiet its C++ logging
    try:
        import tensorflow as tf
    except ImportError:
        raise SystemExit("the generator needs TensorFlow: .venv/bin/python -m pip install -e '.[oracle]'") from None
    tf.get_logger().setLevel("ERROR")
    # One thread each way, so every reduction runs in one order. (enable_op_determinism would
    # also do, but it swaps some ops for others, e.g. the sparse cross-entropy, changing the graphs.)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    return tf


def tensorflow_outputs(tf, model_bytes, feeds, fetches):
    """What TensorFlow computes from the file's bytes alone, in a graph of its own."""
    graph_def = tf.compat.v1.GraphDef.FromString(model_bytes)
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
    with tf.compat.v1.Session(graph=graph, config=session_config(tf)) as sess:
        values = sess.run(fetches, {f"{name}:0": value for name, value in feeds.items()})
    return [np.asarray(v) for v in values]


def census(graph_def):
    return dict(sorted(collections.Counter(node.op for node in graph_def.node).items()))


def made_with(tf):
    import keras
    return {"tensorflow": tf.__version__, "keras": keras.__version__, "numpy": np.__version__}


def write_model(tf, name, model, directory):
    data = model.graph_def.SerializeToString(deterministic=True)  # as tf.io.write_graph writes it
    expected = tensorflow_outputs(tf, data, model.feeds, model.fetches)
    directory.mkdir(parents=True)
    (directory / "model.pb").write_bytes(data)
    for feed, value in model.feeds.items():
        np.save(directory / f"feed_{file_stem(feed)}.npy", value, allow_pickle=False)
    for fetch, value in zip(model.fetches, expected):
        np.save(directory / f"expected_{file_stem(fetch)}.npy", value, allow_pickle=False)
    spec = {
        "description": model.description,
        "feeds": {feed: f"feed_{file_stem(feed)}.npy" for feed in model.feeds},
        "fetches": list(model.fetches),
        "expected": [f"expected_{file_stem(fetch)}.npy" for fetch in model.fetches],
        "exact": False,
        "tolerances": replay.tolerance_spec(graph_pb2.GraphDef.FromString(data), model.fetches, expected),
        "skip": {},
        "ops": census(model.graph_def),
        "made_with": made_with(tf),
    }
    (directory / "case.json").write_text(json.dumps(spec, indent=2) + "\n")
    return spec


def generate(names, root=ROOT):
    """Writes the named models; each goes to a scratch directory first and replaces its old one
    only when complete, so a failing builder leaves the committed files untouched."""
    tf = import_tensorflow()
    written = {}
    with tempfile.TemporaryDirectory(dir=root, prefix=".models-") as scratch:
        for name in names:
            model = BUILDERS[name](tf)
            written[name] = write_model(tf, name, model, Path(scratch) / name)
        for name in names:
            target = root / name
            if target.exists():
                shutil.rmtree(target)
            (Path(scratch) / name).rename(target)
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"models to write (default: all: "
                        f"{', '.join(BUILDERS)})")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in BUILDERS]
    if unknown:
        parser.error(f"unknown model {', '.join(unknown)}; the models are {', '.join(BUILDERS)}")
    written = generate(args.names or list(BUILDERS))
    from graphdef.ops import REGISTRY
    for name, spec in written.items():
        size = (ROOT / name / "model.pb").stat().st_size
        missing = sorted(op for op in spec["ops"] if op not in REGISTRY)
        print(f"{name}: {size} bytes, {sum(spec['ops'].values())} nodes; "
              + ", ".join(f"{op} {count}" for op, count in spec["ops"].items()))
        if missing:
            print(f"  not in graphdef's registry: {', '.join(missing)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
