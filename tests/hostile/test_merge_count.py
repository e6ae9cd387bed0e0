"""A Merge (and any op whose inputs are counted by N) as TensorFlow's importer takes it: N has no
default in TensorFlow's op def (Merge: inputs: N*T, N: int >= 1), so a node without it is refused,
not guessed from its inputs; an N that is below 1 or differs from the inputs is refused too. Both
runtimes say so in the same line; the graphs are built with the protobuf classes, the expected
lines spelled out."""
import numpy as np
import pytest

from graphdef._proto import graph_pb2
from tests.support.cc_helpers import Graph, run_cc
from tests.support.graphrun_helpers import graphrun


def _graph(op, n=None, inputs=("a", "b")):
    g = Graph()
    g.const("a", 1.0, np.float32)
    g.const("b", 2.0, np.float32)
    attrs = {} if n is None else {"N": graph_pb2.AttrValue(i=n)}
    g.op("m", op, list(inputs), np.float32, **attrs)
    return g


CASES = {
    "merge-without-n": (_graph("Merge"), "node 'm' (Merge): missing attr 'N'"),
    "addn-without-n": (_graph("AddN"), "node 'm' (AddN): missing attr 'N'"),
    "merge-n-zero": (_graph("Merge", 0), "node 'm' (Merge): attr 'N' is 0; Merge needs at least 1"),
    "merge-n-negative": (_graph("Merge", -1), "node 'm' (Merge): attr 'N' is -1; Merge needs at least 1"),
    "merge-n-short": (_graph("Merge", 1), "node 'm' (Merge): has 2 data inputs but Merge takes 1"),
    "merge-n-long": (_graph("Merge", 3), "node 'm' (Merge): has 2 data inputs but Merge takes 3"),
    "merge-n-huge": (_graph("Merge", 10 ** 12), "node 'm' (Merge): has 2 data inputs but Merge takes 1000000000000"),
    "merge-n-long-one-input": (_graph("Merge", 2, ["a"]), "node 'm' (Merge): has 1 data input but Merge takes 2"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_merge_count_tensorflow_refuses_is_refused_alike(runner, tmp_path, capsys, case):
    graph, message = CASES[case]
    model = graph.save(tmp_path / "model.pb")
    line = f"{model}: {message}\n"
    assert graphrun(capsys, "run", model) == (3, "", "graphrun: " + line)
    assert run_cc(runner, "run", model) == (3, "", "graphrun-cc: " + line)


def test_a_merge_with_its_count_runs_alike(runner, tmp_path, capsys):
    # with both inputs ready, a Merge forwards its first: 1.0, value_index 0
    model = _graph("Merge", 2).save(tmp_path / "model.pb")
    expected = "m:0 float32 [] = 1.0\nm:1 int32 [] = 0\n"
    assert graphrun(capsys, "run", model) == run_cc(runner, "run", model) == (0, expected, "")
