"""Seed 002's problem: predict a student's IQ from a test score, trained inside the graph.

    python examples/iq.py OUT_DIR

A linear model (w * x + b, the seed's starting values w=0.5, b=0.1) and a quadratic one are
fitted with GradientDescentOptimizer on the squared error, frozen into self-contained .pb
files, and asked about a student who scored 17. graphrun and build/graphrun-cc then run the
same files (see the Makefile's demo target) and print the same predictions.
"""

import os
import sys

import numpy as np

import graphdef as tf
from graphdef import graph_util

out_dir = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(out_dir, exist_ok=True)

# The seed plots its training set without listing it: a noisy, slightly curved rise of IQ
# with score, made here from a fixed seed.
rng = np.random.default_rng(2)
scores = rng.uniform(0, 30, 60).astype(np.float32)
iqs = (85 + 1.6 * scores - 0.02 * scores**2 + rng.normal(0, 3, 60)).astype(np.float32)
x_scaled = scores / 30.0  # keeps plain gradient descent stable; the frozen graph takes raw scores


def fit(name, features, steps):
    """Builds the model from `features(x)`, trains it, freezes it to OUT_DIR/iq_<name>.pb."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, name="x")
        y = tf.placeholder(tf.float32, name="y")
        prediction = tf.identity(features(x / 30.0), name="prediction")
        error = tf.reduce_mean(tf.square(prediction - y), name="error")
        train = tf.train.GradientDescentOptimizer(0.3).minimize(error)
        init = tf.global_variables_initializer()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        for _ in range(steps):
            sess.run(train, {x: scores, y: iqs})
        loss = sess.run(error, {x: scores, y: iqs})
        guess = sess.run(prediction, {x: 17.0})
        frozen = graph_util.freeze(sess, ["prediction"], graph=graph)
    path = os.path.join(out_dir, f"iq_{name}.pb")
    with open(path, "wb") as f:
        f.write(frozen.SerializeToString(deterministic=True))
    print(f"{name:9s} mean squared error {loss:8.3f}; a student who scored 17: IQ {guess:.2f}  ({path})")


def linear(x):
    w = tf.Variable(0.5, name="w")
    b = tf.Variable(0.1, name="b")
    return tf.add(tf.multiply(w, x, name="multiply"), b, name="linear")


def quadratic(x):
    w2 = tf.Variable(0.0, name="w2")
    w1 = tf.Variable(0.5, name="w1")
    b = tf.Variable(0.1, name="b")
    return tf.add(w2 * tf.square(x) + w1 * x, b, name="quadratic")


fit("linear", linear, 2000)
fit("quadratic", quadratic, 30000)  # the x**2 feature makes the valley long and narrow
