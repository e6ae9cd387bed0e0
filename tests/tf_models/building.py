"""What the TensorFlow model builders share: the Model record, the registry of builders, and the
layers, data and training helpers they are made of. TensorFlow is passed in as `tf`, never imported
here, so the suite imports this module without TensorFlow installed."""

from dataclasses import dataclass

import numpy as np

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
