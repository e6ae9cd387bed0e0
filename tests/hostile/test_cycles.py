"""A GraphDef whose inputs close a cycle (other than a while loop's NextIteration -> Merge edge) is
refused at load by both runtimes with the same line, naming the cycle in data-flow order from its
first node in the file, at most eight nodes of it."""

import numpy as np
import pytest

from graphdef.framework.toposort import CycleError, toposort
from tests.support.cc_helpers import Graph, run_cc
from tests.support.graphrun_helpers import run_graphrun

HINT = "(only a while loop's NextIteration -> Merge edge may close a cycle)"


def cyclic_graph(kind):
    g = Graph()
    g.const("a", 1.0, np.float32)
    if kind == "two":  # b reads c, c reads b
        g.op("b", "AddV2", ["a", "c"], np.float32)
        g.op("c", "Identity", ["b"], np.float32)
    elif kind == "self":
        g.op("b", "AddV2", ["a", "b"], np.float32)
    else:  # twelve nodes around, the file listing them from n0
        g.op("n0", "AddV2", ["a", "n11"], np.float32)
        for i in range(1, 12):
            g.op(f"n{i}", "Identity", [f"n{i - 1}"], np.float32)
    return g


@pytest.mark.parametrize("kind, cycle", [
    ("two", "'b' -> 'c' -> 'b'"),
    ("self", "'b' -> 'b'"),
    ("long", " -> ".join(f"'n{i}'" for i in range(8)) + " -> ... -> 'n0'"),
])
def test_both_runtimes_name_the_cycle_alike(runner, tmp_path, kind, cycle):
    path = cyclic_graph(kind).save(tmp_path / "model.pb")
    text = f"{path}: the graph has a cycle: {cycle} {HINT}"
    results = {"graphrun": run_graphrun("run", path, "--fetch", "a"),
               "graphrun-cc": run_cc(runner, "run", path, "--fetch", "a")}
    for name, result in results.items():
        assert result == (3, "", f"{name}: {text}\n"), name


def test_toposort_reports_the_members_in_data_flow_order():
    inputs = {"x": ["z"], "y": ["x"], "z": ["y"]}  # x -> y -> z -> x
    with pytest.raises(CycleError) as caught:
        toposort(["y"], inputs.__getitem__)
    cycle = caught.value.cycle
    start = cycle.index("x")
    assert cycle[start:] + cycle[:start] == ["x", "y", "z"]
