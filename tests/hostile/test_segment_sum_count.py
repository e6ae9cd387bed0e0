"""UnsortedSegmentSum with a negative num_segments is refused in one line by both runtimes, in the
segment family's words, also when there are no ids to compare it with (numpy's "negative
dimensions are not allowed" before)."""

import numpy as np
import pytest

from tests.support.cc_helpers import Graph, type_attr
from tests.support.cc_helpers import fails as cc_fails
from tests.support.graphrun_helpers import fails


@pytest.mark.parametrize("ids", [[0, 1], []])
def test_a_negative_num_segments_is_refused_alike(runner, tmp_path, capsys, ids):
    g = Graph()
    g.const("data", np.ones((len(ids), 3), np.float32))
    g.const("ids", np.asarray(ids, np.int32))
    g.placeholder("num", np.int32, [])
    g.op("u", "UnsortedSegmentSum", ["data", "ids", "num"], np.float32, Tindices=type_attr(np.int32),
         Tnumsegments=type_attr(np.int32))
    args = [g.save(tmp_path / "m.pb"), "--feed", "num=-2"]
    want = "node 'u' (UnsortedSegmentSum): Input num_segments == -2 must not be negative."
    assert fails(capsys, 4, *args) == f"graphrun: {want}\n"
    assert cc_fails(runner, 4, *args) == f"graphrun-cc: {want}"
