"""Gradient-check rows for the TensorArray ops, in tests/python/test_gradients.py's TABLE form: builder over
float64 placeholder inputs, input shapes, and the domain each input is sampled from."""

import graphdef as tf


def _written(x):
    ta = tf.TensorArray(tf.float64, size=3, clear_after_read=False)
    for i in range(3):
        ta = ta.write(i, x[i] * x[i])
    return ta


def _read(x):
    ta = _written(x)
    return tf.stack([ta.read(2), ta.read(0) * 3.0])


def _scattered(x):
    return tf.TensorArray(tf.float64, size=3).scatter([2, 0, 1], tf.sin(x)).gather([1, 2])


def _split_concat(x):
    ta = tf.TensorArray(tf.float64, size=3, infer_shape=False).split(x * x, [1, 3, 2])
    return tf.reshape(ta.concat(), [6]) * tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], tf.float64)


def _unstacked_loop(x):
    """A while loop reading rows unstacked before it and writing each step (map_fn's pattern)."""
    rows = tf.TensorArray(tf.float64, size=3).unstack(x)
    out = tf.TensorArray(tf.float64, size=3)
    _, out = tf.while_loop(lambda i, o: i < 3, lambda i, o: (i + 1, o.write(i, tf.exp(rows.read(i)))),
                           [tf.constant(0), out])
    return out.stack()


ROWS = {
    "TensorArrayWriteV3": (lambda x: tf.reshape(_written(x).stack(), [3, 2]), [(3, 2)], [(-2, 2)]),
    "TensorArrayReadV3": (_read, [(3, 2)], [(-2, 2)]),
    "TensorArrayGatherV3": (lambda x: _written(x).gather([2, 0]), [(3, 2)], [(-2, 2)]),
    "TensorArrayScatterV3": (_scattered, [(3, 2)], [(-2, 2)]),
    "TensorArraySplitV3": (_split_concat, [(6,)], [(-2, 2)]),
    "TensorArrayConcatV3": (_split_concat, [(6,)], [(-2, 2)]),
}
LOOP_ROWS = {"while loop": (_unstacked_loop, [(3, 2)], [(-1, 1)])}
