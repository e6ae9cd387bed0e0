"""TensorFlow-made models that keep functions: control flow v2 and no-inline tf.functions.

Frozen with convert_variables_to_constants_v2(..., lower_control_flow=False), so If, StatelessIf,
While and StatelessWhile stay with their branch and loop functions in GraphDef.library, and a
tf.function marked `_noinline` stays a PartitionedCall (a StatefulPartitionedCall when it reads
a variable), nested calls included. generate.py registers BUILDERS; each returns the fields of
its Model (graph_def, feeds, fetches, description).
"""

import numpy as np

F32 = np.float32
BUILDERS = {}


def builder(fn):
    BUILDERS[fn.__name__.removeprefix("build_")] = fn
    return fn


def _freeze(tf, fn, *specs):
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2
    frozen = convert_variables_to_constants_v2(fn.get_concrete_function(*specs), lower_control_flow=False)
    return frozen.graph.as_graph_def()


@builder
def build_tf2_control_flow(tf):
    """tf.cond and tf.while_loop in a tf.function, kept as If/StatelessIf/While/StatelessWhile."""
    w = tf.Variable(np.array([[1.5, -2.0], [0.5, 3.0]], F32))
    scale = tf.Variable(np.array([0.75, -0.5], F32))

    def model(x, n):
        pos = tf.reduce_sum(x) > 0
        y = tf.cond(pos, lambda: tf.matmul(x, w), lambda: x * 2.0 - 1.0)           # reads w: If
        z = tf.cond(n > 2, lambda: tf.abs(y) + 1.0, lambda: y - tf.reduce_max(y))  # pure: StatelessIf
        _, acc = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * 0.5 + z),
                               [tf.constant(0), z])                                  # pure: StatelessWhile
        _, grown = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * scale + 0.25),
                                 [tf.constant(0), acc])                              # reads scale: While
        return tf.identity(grown, name="out"), tf.identity(acc, name="acc")

    fn = tf.function(model)
    graph_def = _freeze(tf, fn, tf.TensorSpec([None, 2], tf.float32, name="x"),
                        tf.TensorSpec([], tf.int32, name="n"))
    feeds = {"x": np.array([[1, 2], [3, -1], [0.5, -4]], F32), "n": np.array(4, np.int32)}
    return (graph_def, feeds, ["Identity:0", "Identity_1:0"],
                 "tf.function with tf.cond (one reading a variable: If; one pure: StatelessIf) and "
                 "tf.while_loop (pure: StatelessWhile; reading a variable: While), frozen with "
                 "convert_variables_to_constants_v2(lower_control_flow=False)")


@builder
def build_tf2_noinline_calls(tf):
    """Keras layers calling `_noinline` tf.functions: nested PartitionedCalls and a StatefulPartitionedCall."""
    import keras
    keras.backend.clear_session()
    keras.utils.set_random_seed(7)
    offset = tf.Variable(np.array([0.5, -1.0, 2.0], F32))

    @tf.function(experimental_attributes={"_noinline": True})
    def inner(x):
        return tf.tanh(x) * 2.0

    @tf.function(experimental_attributes={"_noinline": True})
    def outer(x, w):
        return inner(tf.matmul(x, w)) + 1.0

    @tf.function(experimental_attributes={"_noinline": True})
    def shifted(x):
        return x - offset  # a captured variable: the call is stateful

    class Projection(keras.layers.Layer):
        def build(self, shape):
            self.w = self.add_weight(shape=(shape[-1], 3), initializer="glorot_uniform")

        def call(self, x):
            return shifted(outer(x, tf.convert_to_tensor(self.w)))

    model = keras.Sequential([Projection(), keras.layers.Dense(3, activation="relu")])
    model.build((None, 4))
    fn = tf.function(lambda x: model(x, training=False))
    graph_def = _freeze(tf, fn, tf.TensorSpec([None, 4], tf.float32, name="x"))
    feeds = {"x": np.random.default_rng(108).normal(size=(5, 4)).astype(F32)}
    return (graph_def, feeds, ["Identity:0"],
                 "Keras Sequential: a layer calling _noinline tf.functions (outer calls inner: nested "
                 "PartitionedCalls; one reads a captured variable: StatefulPartitionedCall), then "
                 "Dense relu; frozen with convert_variables_to_constants_v2(lower_control_flow=False)")
