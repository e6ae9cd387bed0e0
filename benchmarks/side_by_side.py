"""The harness the graphdef-vs-TensorFlow benchmarks share: time one `measure(api)` per
library in this process and print each case with its ratio and target."""

import os
import timeit

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def best_seconds(step, number):
    """The best of five repeats (the least disturbed by other load), after one warm-up call."""
    step()  # the first run plans (graphdef) or compiles (TensorFlow) the graph
    return min(timeit.repeat(step, number=number, repeat=5)) / number


def compare(measure, targets):
    """Runs measure(graphdef) and measure(tf.compat.v1); prints a table; returns 0."""
    import graphdef
    ours = measure(graphdef)
    try:
        import tensorflow
    except ImportError:
        print("TensorFlow is not installed (make test installs it); graphdef alone:")
        for case, seconds in ours.items():
            print(f"{case:7s} graphdef {seconds * 1e6:10.1f} us")
        return 0
    tf1 = tensorflow.compat.v1
    tf1.disable_eager_execution()
    theirs = measure(tf1)
    print(f"{'case':7s} {'graphdef':>12s} {'tensorflow':>12s} {'ratio':>7s} {'target':>7s}")
    for case in ours:
        ratio = ours[case] / theirs[case]
        verdict = "ok" if ratio <= targets[case] else "MISSED"
        print(f"{case:7s} {ours[case] * 1e6:9.1f} us {theirs[case] * 1e6:9.1f} us {ratio:7.3f} "
              f"{targets[case]:7.2f} {verdict}")
    return 0
