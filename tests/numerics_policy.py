"""Comparisons under the numerics policy (graphdef/framework/numerics.py): a test names the graph and
the fetch, and the tolerance comes from the ops that made the value, never from a literal."""

from pathlib import Path

import numpy as np

from graphdef._proto import graph_pb2
from graphdef.ops.registry import numerics_of


def graph_def_of(model):
    """A GraphDef from a .pb path, a graphdef.Graph or a GraphDef."""
    if isinstance(model, (str, Path)):
        return graph_pb2.GraphDef.FromString(Path(model).read_bytes())
    return model.as_graph_def() if hasattr(model, "as_graph_def") else model


def tolerance_of(model, fetch, dtype):
    return numerics_of(graph_def_of(model), fetch).tolerance(np.dtype(dtype))


def assert_conforms(actual, expected, model, fetch):
    """`actual` equals `expected` within what the policy allows `fetch` of `model`."""
    expected = np.asarray(expected)
    why = tolerance_of(model, fetch, expected.dtype).mismatch(np.asarray(actual), expected)
    assert why is None, f"{fetch}: {why}"
