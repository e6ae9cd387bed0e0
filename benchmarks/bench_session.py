"""Session.run overhead, side by side with TensorFlow's tf.compat.v1 Session in this process.

    .venv/bin/python benchmarks/bench_session.py

Cases (the portable-slice issue's targets):
  seed   the seed program (15*5 / (15+5)), after the first run   target: <= 0.25x TensorFlow
  chain  1,000 scalar additions on a fed placeholder             target: <= 1.0x TensorFlow
Times are the best of several repeats (the least disturbed by other load on the machine).
"""

import os
import sys
import timeit

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


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


def best_seconds(fn, number):
    fn()  # the first run plans (ours) or compiles (TensorFlow) the graph
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def measure(api):
    graph, seed, x, chain = build(api)
    sess = api.Session(graph=graph)
    feed = {x: np.float32(1.0)}
    assert float(sess.run(seed)) == 3.75 and float(sess.run(chain, feed)) == 1001.0
    return {"seed": best_seconds(lambda: sess.run(seed), 2000),
            "chain": best_seconds(lambda: sess.run(chain, feed), 200)}


def main():
    import graphdef
    ours = measure(graphdef)
    try:
        import tensorflow as tensorflow
    except ImportError:
        print("TensorFlow is not installed (make test installs it); graphdef alone:")
        for case, seconds in ours.items():
            print(f"{case:6s} graphdef {seconds * 1e6:9.1f} us")
        return 0
    tf1 = tensorflow.compat.v1
    tf1.disable_eager_execution()
    theirs = measure(tf1)
    targets = {"seed": 0.25, "chain": 1.0}
    print(f"{'case':6s} {'graphdef':>12s} {'tensorflow':>12s} {'ratio':>7s} {'target':>7s}")
    for case in ours:
        ratio = ours[case] / theirs[case]
        verdict = "ok" if ratio <= targets[case] else "MISSED"
        print(f"{case:6s} {ours[case] * 1e6:9.1f} us {theirs[case] * 1e6:9.1f} us {ratio:7.3f} "
              f"{targets[case]:7.2f} {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
