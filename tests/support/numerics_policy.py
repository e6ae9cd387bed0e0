"""The tests' comparisons, all in one place. Bit for bit (`assert_same`) where the arithmetic is exactly
specified; elsewhere under the numerics policy (graphdef/framework/numerics.py): a test names the graph and
the fetch, and the tolerance comes from the ops that made the value, never from a literal."""

from pathlib import Path

import numpy as np

from graphdef._proto import graph_pb2
from graphdef.framework.numerics import combined
from graphdef.ops.registry import numerics_of


def assert_same(actual, expected):
    """Equal dtype, shape and bits (any NaN matches any NaN)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual, expected)
    if expected.dtype.kind == "f":
        both_nan = np.isnan(actual) & np.isnan(expected)
        bits = f"u{expected.dtype.itemsize}"
        assert np.all(both_nan | (actual.view(bits) == expected.view(bits))), (actual, expected)
    else:
        assert np.array_equal(actual, expected), (actual, expected)


def graph_def_of(model):
    """A GraphDef from a .pb path, a graphdef.Graph or a GraphDef."""
    if isinstance(model, (str, Path)):
        return graph_pb2.GraphDef.FromString(Path(model).read_bytes())
    return model.as_graph_def() if hasattr(model, "as_graph_def") else model


def tolerance_of(model, fetch, dtype, slack=1):
    """`slack` multiplies the policy's ulps where an oracle computes a longer chain than the graph says
    (TensorFlow's fused gradient kernels); it is never a tolerance of its own."""
    return combined([numerics_of(graph_def_of(model), fetch)] * slack).tolerance(np.dtype(dtype))


def assert_conforms(actual, expected, model, fetch, slack=1):
    """`actual` equals `expected` within what the policy allows `fetch` of `model`."""
    expected = np.asarray(expected)
    why = tolerance_of(model, fetch, expected.dtype, slack).mismatch(np.asarray(actual), expected)
    assert why is None, f"{fetch}: {why}"


def assert_all_conform(actuals, expecteds, model, fetches, slack=1, who="the two"):
    """assert_conforms for each fetch, naming every one that does not."""
    graph_def = graph_def_of(model)
    problems = []
    for fetch, a, b in zip(fetches, actuals, expecteds):
        b = np.asarray(b)
        why = tolerance_of(graph_def, fetch, b.dtype, slack).mismatch(np.asarray(a), b)
        if why:
            problems.append(f"{fetch}: {why}")
    assert not problems, f"{who} differ:\n  " + "\n  ".join(problems)
