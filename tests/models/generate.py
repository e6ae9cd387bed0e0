"""Writes the committed test models; run `.venv/bin/python -m tests.models.generate` after changing one.

    mlp.pb            x [?,16] -> dense1 (32, relu) -> dense2 (32, relu) -> output (1, sigmoid)
    cnn.pb            x [?,8,8,1] -> input scaling -> conv1 3x3x4, batch norm, relu -> pool1 2x2 max
                      -> conv2 2x2x8, batch norm, relu -> dense (16, relu) -> logits (10)
                      -> softmax: a small CNN of about 50 nodes in name scopes
    unsupported.pbtxt is written by hand (an op no runtime implements), not here.

The registry has no Conv2D, so each convolution is the MatMul it equals: the image,
flattened, times a Toeplitz matrix built here from the 3x3 (or 2x2) kernel, whose
column (i, j, c) holds the kernel weights at the input pixels under output (i, j).
Max pooling is a Reshape that splits each spatial axis in (blocks, 2) and a Max over the
two inner axes. Weights come from a seeded generator, so the bytes never change.
"""

import pathlib
import sys

import numpy as np

import graphdef as tf

HERE = pathlib.Path(__file__).resolve().parent


def dense(x, rng, n_in, n_out, activation, scope):
    with tf.name_scope(scope):
        w = tf.constant((rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32), name="kernel")
        b = tf.constant((rng.standard_normal(n_out) * 0.1).astype(np.float32), name="bias")
        y = tf.add(tf.matmul(x, w, name="MatMul"), b, name="BiasAdd")
        return activation(y) if activation else y


def build_mlp():
    rng = np.random.default_rng(1)
    x = tf.placeholder(tf.float32, [None, 16], name="x")
    h = dense(x, rng, 16, 32, tf.nn.relu, "dense1")
    h = dense(h, rng, 32, 32, tf.nn.relu, "dense2")
    with tf.name_scope("output"):
        logit = dense(h, rng, 32, 1, None, "logit")
        tf.sigmoid(logit, name="score")


def toeplitz(kernel, size):
    """The [size*size*c_in, out*out*c_out] matrix of a valid, stride-1 convolution."""
    k, _, c_in, c_out = kernel.shape
    out = size - k + 1
    matrix = np.zeros((size, size, c_in, out, out, c_out), np.float32)
    for i in range(out):
        for j in range(out):
            matrix[i:i + k, j:j + k, :, i, j, :] = kernel
    return matrix.reshape(size * size * c_in, out * out * c_out)


def conv(x, rng, size, k, c_in, c_out, scope):
    """relu(conv(x) + bias) with x [?, size*size*c_in] flattened; returns [?, out*out*c_out]."""
    out = size - k + 1
    kernel = (rng.standard_normal((k, k, c_in, c_out)) / np.sqrt(k * k * c_in)).astype(np.float32)
    bias = (rng.standard_normal(c_out) * 0.1).astype(np.float32)
    with tf.name_scope(scope):
        w = tf.constant(toeplitz(kernel, size), name="toeplitz")
        b = tf.constant(np.tile(bias, out * out), name="bias")
        y = tf.add(tf.matmul(x, w, name="MatMul"), b, name="BiasAdd")
        return tf.nn.relu(batch_norm(y, rng, out * out, c_out), name="Relu")


def batch_norm(y, rng, positions, channels):
    """Inference-time batch norm, folded to a per-channel scale and shift."""
    with tf.name_scope("batchnorm"):
        gamma = np.tile((1 + 0.1 * rng.standard_normal(channels)).astype(np.float32), positions)
        beta = np.tile((0.1 * rng.standard_normal(channels)).astype(np.float32), positions)
        scaled = tf.multiply(y, tf.constant(gamma, name="gamma"), name="scale")
        return tf.add(scaled, tf.constant(beta, name="beta"), name="shift")


def max_pool(x, size, channels, scope):
    """2x2 max pooling of x [?, size, size, channels] given flat; returns it flat."""
    half = size // 2
    with tf.name_scope(scope):
        blocks = tf.reshape(x, [-1, half, 2, half, 2, channels], name="blocks")
        pooled = tf.reduce_max(blocks, axis=[2, 4], name="Max")
        return tf.reshape(pooled, [-1, half * half * channels], name="flat")


def build_cnn():
    rng = np.random.default_rng(2)
    x = tf.placeholder(tf.float32, [None, 8, 8, 1], name="x")
    with tf.name_scope("input"):
        centred = tf.subtract(x, tf.constant(0.5, name="mean"), name="centre")
        scaled = tf.multiply(centred, tf.constant(4.0, name="inv_std"), name="scale")
        flat = tf.reshape(scaled, [-1, 64], name="flatten")
    h = conv(flat, rng, 8, 3, 1, 4, "conv1")                  # [?, 6*6*4]
    h = max_pool(h, 6, 4, "pool1")                            # [?, 3*3*4]
    h = conv(h, rng, 3, 2, 4, 8, "conv2")                     # [?, 2*2*8]
    h = dense(h, rng, 32, 16, tf.nn.relu, "dense")
    logits = dense(h, rng, 16, 10, None, "logits")
    with tf.name_scope("softmax"):
        shifted = tf.subtract(logits, tf.reduce_max(logits, axis=1, keepdims=True, name="Max"), name="shifted")
        e = tf.exp(shifted, name="Exp")
        tf.divide(e, tf.reduce_sum(e, axis=1, keepdims=True, name="Sum"), name="probs")


MODELS = {"mlp.pb": build_mlp, "cnn.pb": build_cnn}


def write(directory=HERE):
    for name, build in MODELS.items():
        g = tf.Graph()
        with g.as_default():
            build()
        tf.save(g, pathlib.Path(directory) / name)


if __name__ == "__main__":
    write(sys.argv[1] if len(sys.argv) > 1 else HERE)
