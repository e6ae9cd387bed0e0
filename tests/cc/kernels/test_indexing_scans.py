"""graphrun-cc's GatherNd, ScatterNd, Where, TopKV2, Cumsum, MirrorPad and Reciprocal on hostile input:
indices out of range, k past the last dim, sizes past the limit, each one error line naming the node
(exit 4), never a crash; and a few values against numpy. The conformance cases, which graphrun-cc
replays, check the values of every new op."""

import numpy as np

from tests.support.cc_helpers import Graph, fails, feeds, output, type_attr
from tests.support.numerics_policy import assert_same
from graphdef._proto import graph_pb2


def _model(tmp_path, op, inputs, **attrs):
    """Placeholders named by `inputs` (name -> dtype) feeding node 'z' of type `op`."""
    g = Graph()
    for name, dtype in inputs.items():
        g.placeholder(name, dtype)
    g.node("z", op, list(inputs), **attrs)
    return g.save(tmp_path / "model.pb")


def _gather_nd(tmp_path):
    return _model(tmp_path, "GatherNd", {"p": np.float32, "i": np.int32}, Tparams=type_attr(np.float32),
                  Tindices=type_attr(np.int32))


def _scatter_nd(tmp_path, index=np.int32):
    return _model(tmp_path, "ScatterNd", {"i": index, "u": np.float32, "s": index}, T=type_attr(np.float32),
                  Tindices=type_attr(index))


def test_gather_nd_values_and_out_of_range_coordinates(runner, tmp_path):
    model = _gather_nd(tmp_path)
    p = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert_same(output(runner, model, *feeds(p=p.tolist(), i=[[1, 2], [0, 0]])), np.array([p[1, 2], p[0, 0]]))
    assert_same(output(runner, model, *feeds(p=p.tolist(), i=[[1]])), p[1:2])
    line = fails(runner, 4, model, *feeds(p=p.tolist(), i=[[0, 1], [1, 3]]))
    assert "node 'z' (GatherNd)" in line and "[1,3]" in line and "do not index into shape [2,3]" in line, line
    assert "[-1]" in fails(runner, 4, model, *feeds(p=p.tolist(), i=[[-1]]))
    assert "index depth 3" in fails(runner, 4, model, *feeds(p=p.tolist(), i=[[0, 0, 0]]))
    assert "at least one dim" in fails(runner, 4, model, *feeds(p=p.tolist(), i=0))


def test_gather_nd_output_past_the_limit_is_refused(runner, tmp_path):
    # 2^22 coordinate rows, each picking a 2^20-element slice: 16 TiB asked for by 20 MiB of Consts
    g = Graph()
    g.node("p", "Const", dtype=type_attr(np.float32),
           value=graph_pb2.AttrValue(tensor=_splat(np.float32, [1, 1 << 20])))
    g.node("i", "Const", dtype=type_attr(np.int32), value=graph_pb2.AttrValue(tensor=_splat(np.int32, [1 << 22, 1])))
    g.node("z", "GatherNd", ["p", "i"], Tparams=type_attr(np.float32), Tindices=type_attr(np.int32))
    line = fails(runner, 4, g.save(tmp_path / "big.pb"))
    assert "node 'z' (GatherNd)" in line and "[4194304,1048576] float32" in line and "over the limit" in line, line


def _splat(dtype, shape):
    """A TensorProto of zeros stored as one value, as TF stores a splat."""
    proto = graph_pb2.TensorProto(dtype=graph_pb2.DT_INT32 if dtype == np.int32 else graph_pb2.DT_FLOAT)
    for d in shape:
        proto.tensor_shape.dim.add().size = d
    if dtype == np.int32:
        proto.int_val.append(0)
    else:
        proto.float_val.append(0.0)
    return proto


def test_scatter_nd_values_duplicates_and_errors(runner, tmp_path):
    model = _scatter_nd(tmp_path)
    out = output(runner, model, *feeds(i=[[1], [1], [0]], u=[[1, 2], [3, 4], [5, 6]], s=[3, 2]))
    assert_same(out, np.array([[5, 6], [4, 6], [0, 0]], np.float32))
    line = fails(runner, 4, model, *feeds(i=[[3]], u=[[1, 2]], s=[3, 2]))
    assert "node 'z' (ScatterNd)" in line and "[3]" in line and "do not index into shape [3,2]" in line, line
    assert "must have shape indices[:-1] + shape[1:]" in fails(runner, 4, model, *feeds(i=[[0]], u=[[1]], s=[3, 2]))
    assert "must not be negative" in fails(runner, 4, model, *feeds(i=[[0]], u=[[1]], s=[-3, 1]))


def test_scatter_nd_shape_past_the_limit_is_refused_before_allocating(runner, tmp_path):
    model = _scatter_nd(tmp_path, np.int64)
    line = fails(runner, 4, model, *feeds(i=[[0]], u=[[1.0]], s=[2**40, 2**20]))
    assert "node 'z' (ScatterNd)" in line and "over the limit" in line, line
    assert "over the limit" in fails(runner, 4, model, *feeds(i=[[0]], u=[[1.0]], s=[2**62, 2**62]))


def test_top_k_refuses_k_past_the_last_dim(runner, tmp_path):
    model = _model(tmp_path, "TopKV2", {"x": np.float32, "k": np.int32}, T=type_attr(np.float32))
    x = [[3.0, 1.0, 3.0], [0.0, -0.0, 2.0]]
    assert_same(output(runner, model, *feeds(x=x, k=2), "--fetch", "z:1"), np.array([[0, 2], [2, 0]], np.int32))
    line = fails(runner, 4, model, *feeds(x=x, k=4))
    assert "node 'z' (TopKV2)" in line and "k 4 must be in [0, 3]" in line, line
    assert "k -1 must be in" in fails(runner, 4, model, *feeds(x=x, k=-1))
    assert "k must be a scalar" in fails(runner, 4, model, *feeds(x=x, k=[1]))


def test_where_scan_mirror_pad_and_reciprocal_errors(runner, tmp_path):
    where = _model(tmp_path, "Where", {"x": np.bool_}, T=type_attr(np.bool_))
    assert "at least one dim" in fails(runner, 4, where, *feeds(x=True))
    (tmp_path / "s").mkdir()
    scan = _model(tmp_path / "s", "Cumsum", {"x": np.float32, "a": np.int32}, T=type_attr(np.float32))
    assert "out of range" in fails(runner, 4, scan, *feeds(x=[[1.0]], a=2))
    (tmp_path / "m").mkdir()
    mirror = _model(tmp_path / "m", "MirrorPad", {"x": np.float32, "p": np.int64}, T=type_attr(np.float32),
                    Tpaddings=type_attr(np.int64), mode=graph_pb2.AttrValue(s=b"REFLECT"))
    line = fails(runner, 4, mirror, *feeds(x=[[1.0, 2.0]], p=[[0, 0], [2, 0]]))
    assert "node 'z' (MirrorPad)" in line and "at most 1 in REFLECT mode" in line, line
    (tmp_path / "p").mkdir()
    pad = _model(tmp_path / "p", "PadV2", {"x": np.float32, "p": np.int64, "c": np.float32}, T=type_attr(np.float32),
                 Tpaddings=type_attr(np.int64))
    line = fails(runner, 4, pad, *feeds(x=[[1.0]], p=[[0, 2**40], [0, 2**20]], c=0.5))
    assert "node 'z' (PadV2)" in line and "over the limit" in line, line
    assert "too large" in fails(runner, 4, pad, *feeds(x=[[1.0]], p=[[2**62, 2**62], [0, 0]], c=0.5))
    (tmp_path / "r").mkdir()
    reciprocal = _model(tmp_path / "r", "Reciprocal", {"x": np.int32}, T=type_attr(np.int32))
    assert "integer reciprocal of 0" in fails(runner, 4, reciprocal, *feeds(x=[1, 0]))
