"""graphrun-cc's elementwise, reduction, MatMul and Reshape kernels: what they refuse, each in one line
naming the node. What they compute is in the conformance table (tests/conformance/table/), which every
runtime replays.

Every graph is built with the generated protobuf classes (not the graphdef package), and every
expected value is a literal or numpy worked out in the test: an oracle independent of the runner.
Shared builders and runners are in tests/support/cc_helpers.py.
"""

import numpy as np
import pytest

from tests.support.cc_helpers import X23, binary_graph, fails, fed_graph, feeds, unary_graph


def test_broadcast_mismatch_names_the_node(runner, tmp_path):
    model = fed_graph(tmp_path, "AddV2", [np.float32, np.float32])
    line = fails(runner, 4, model, *feeds(a=X23.tolist(), b=[1, 2]))
    assert line == "graphrun-cc: node 'z' (AddV2): cannot broadcast [2,3] with [2]"


def test_real_div_refuses_integers(runner, tmp_path):
    line = fails(runner, 3, binary_graph(tmp_path, "RealDiv", [1, 2], [3, 4], np.int32))
    assert "node 'z' (RealDiv)" in line and "int32" in line


def test_erfc_refuses_integers(runner, tmp_path):
    assert "node 'z' (Erfc): attr 'T' is int32" in fails(runner, 3, unary_graph(tmp_path, "Erfc", [1], np.int32))


def test_reduction_axis_errors(runner, tmp_path):
    model = fed_graph(tmp_path, "Sum", [np.float32, np.int32])
    x = np.ones((2, 3)).tolist()
    assert "listed twice" in fails(runner, 4, model, *feeds(a=x, b=[1, -1]))
    assert "out of range" in fails(runner, 4, model, *feeds(a=x, b=[2]))


def test_matmul_shape_error_names_the_node(runner, tmp_path):
    model = fed_graph(tmp_path, "MatMul", [np.float32, np.float32])
    line = fails(runner, 4, model, *feeds(a=np.ones((2, 3)).tolist(), b=np.ones((4, 5)).tolist()))
    assert line == "graphrun-cc: node 'z' (MatMul): cannot multiply [2,3] by [4,5]"


@pytest.mark.parametrize("shape", [[4, -1], [-1, -1], [7]])
def test_reshape_errors(runner, tmp_path, shape):
    model = fed_graph(tmp_path, "Reshape", [np.float32, np.int32])
    line = fails(runner, 4, model, *feeds(a=np.zeros((2, 3)).tolist(), b=shape))
    assert line.startswith("graphrun-cc: node 'z' (Reshape): ")


