"""One training step, side by side with TensorFlow's tf.compat.v1 Session in this process.

    .venv/bin/python benchmarks/bench_training.py

Cases (the learning issue's targets):
  linear  seed 002's linear regression, scalar feeds, GradientDescent   target: <= 0.5x TensorFlow
  mlp     784-512-512-10 ReLU MLP, softmax cross-entropy, batch 256, GD  target: <= 1.0x TensorFlow
Both libraries build the same graph from the same initial weights; times are the best of repeats.
"""

import sys

import numpy as np

from side_by_side import best_seconds, compare


def linear(api):
    graph = api.Graph()
    with graph.as_default():
        x = api.placeholder(api.float32, name="x")
        y = api.placeholder(api.float32, name="y")
        w = api.Variable(0.5, name="w")
        b = api.Variable(0.1, name="b")
        error = api.square(w * x + b - y)
        train = api.train.GradientDescentOptimizer(0.001).minimize(error)
        init = api.global_variables_initializer()
    sess = api.Session(graph=graph)
    sess.run(init)
    feed = {x: np.float32(17.0), y: np.float32(110.0)}
    return lambda: sess.run(train, feed)


def mlp(api):
    rng = np.random.default_rng(0)
    sizes = (784, 512, 512, 10)
    weights = [(rng.normal(0, 0.05, (a, b)).astype(np.float32), np.zeros(b, np.float32))
               for a, b in zip(sizes, sizes[1:])]
    images = rng.uniform(0, 1, (256, 784)).astype(np.float32)
    labels = rng.integers(0, 10, 256).astype(np.int32)
    graph = api.Graph()
    with graph.as_default():
        x = api.placeholder(api.float32, [None, 784], name="x")
        y = api.placeholder(api.int32, [None], name="y")
        h = x
        for i, (w0, b0) in enumerate(weights):
            h = api.matmul(h, api.Variable(w0, name=f"w{i}")) + api.Variable(b0, name=f"b{i}")
            if i < len(weights) - 1:
                h = api.nn.relu(h)
        loss = api.reduce_mean(api.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
        train = api.train.GradientDescentOptimizer(0.01).minimize(loss)
        init = api.global_variables_initializer()
    sess = api.Session(graph=graph)
    sess.run(init)
    feed = {x: images, y: labels}
    return lambda: sess.run(train, feed)


def measure(api):
    return {"linear": best_seconds(linear(api), 2000), "mlp": best_seconds(mlp(api), 20)}


def main():
    return compare(measure, {"linear": 0.5, "mlp": 1.0})


if __name__ == "__main__":
    sys.exit(main())
