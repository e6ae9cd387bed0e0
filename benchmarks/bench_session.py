"""Session.run overhead, side by side with TensorFlow's tf.compat.v1 Session in this process.

    .venv/bin/python benchmarks/bench_session.py

Cases (the portable-slice issue's targets):
  seed   the seed program (15*5 / (15+5)), after the first run   target: <= 0.25x TensorFlow
  chain  1,000 scalar additions on a fed placeholder             target: <= 1.0x TensorFlow
Times are the best of several repeats (the least disturbed by other load on the machine).
"""

import sys

import numpy as np

from side_by_side import best_seconds, compare


def build(api):
    """The same two graphs, written once against the shared tf.compat.v1 surface."""
    graph = api.Graph()
    with graph.as_default():
        a = api.constant(15, name="a")
        b = api.constant(5, name="b")
        seed = api.divide(api.multiply(a, b, name="Multiply"), api.add(a, b, name="Add"), name="Divide")
        x = api.placeholder(api.float32, [], name="x")
        chain = x
        for _ in range(1000):
            chain = api.add(chain, 1.0)
    return graph, seed, x, chain


def measure(api):
    graph, seed, x, chain = build(api)
    sess = api.Session(graph=graph)
    feed = {x: np.float32(1.0)}
    assert float(sess.run(seed)) == 3.75 and float(sess.run(chain, feed)) == 1001.0
    return {"seed": best_seconds(lambda: sess.run(seed), 2000),
            "chain": best_seconds(lambda: sess.run(chain, feed), 200)}


def main():
    return compare(measure, {"seed": 0.25, "chain": 1.0})


if __name__ == "__main__":
    sys.exit(main())
