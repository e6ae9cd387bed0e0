"""Consts and --shape values whose claims do not match their data, in both runtimes: each is one
line naming the node (or flag) and what is wrong, in the same words and with the same exit code
from graphrun and graphrun-cc; where TensorFlow's rules give a value (a fill of the wrong
field, too many values), both give the same value.

Each file is built here, as protobuf messages, so the lie is plain in the test.
"""

import numpy as np
import pytest

from graphdef._proto import graph_pb2
from graphdef.framework import limits
from graphdef.wire.serialize import load
from tests.support.cc_helpers import run_cc
from tests.support.graphrun_helpers import run_graphrun

DT = graph_pb2.DataType


def const_file(tmp_path, dtype, dims, content=None, name="model.pb", **values):
    """A GraphDef of one Const 'c' of `dtype` claiming shape `dims`, given by `content` bytes or typed `values`."""
    graph = graph_pb2.GraphDef()
    node = graph.node.add(name="c", op="Const")
    node.attr["dtype"].type = dtype
    tensor = node.attr["value"].tensor
    tensor.dtype = dtype
    for d in dims:
        tensor.tensor_shape.dim.add().size = d
    if content is not None:
        tensor.tensor_content = content
    for field, items in values.items():
        getattr(tensor, field).extend(items)
    path = tmp_path / name
    path.write_bytes(graph.SerializeToString())
    return path


@pytest.fixture(autouse=True)
def default_limit(monkeypatch):
    """Both runtimes at the default limit (graphrun runs in this process)."""
    monkeypatch.delenv(limits.ENV, raising=False)
    monkeypatch.delenv(limits.ROOT_ENV, raising=False)


def both(runner, *args):
    """{"graphrun": (code, stdout, stderr), "graphrun-cc": ...} for the same arguments."""
    env = {limits.ENV: None, limits.ROOT_ENV: None}
    return {"graphrun": run_graphrun(*args), "graphrun-cc": run_cc(runner, *args, env=env, timeout=60)}


def same_line(runner, code, args, text):
    """Both exit `code` with nothing on stdout and the one line `<runtime>: text`."""
    for name, (got, stdout, stderr) in both(runner, *args).items():
        assert (got, stdout, stderr) == (code, "", f"{name}: {text}\n"), name


@pytest.mark.parametrize("size", [3, 15, 17, 1 << 12])
def test_tensor_content_of_the_wrong_length(runner, tmp_path, size):
    path = const_file(tmp_path, DT.DT_FLOAT, [4], b"\0" * size)
    same_line(runner, 3, [path], f"{path}: node 'c' (Const): attr 'value': tensor_content holds {size} bytes but a "
                                 "float32 tensor of shape [4] needs 16")


@pytest.mark.parametrize("dims", [[-1], [-3, 2], [2, -(2 ** 63)]])
def test_negative_dims(runner, tmp_path, dims):
    path = const_file(tmp_path, DT.DT_FLOAT, dims, float_val=[1.0])
    shown = "[" + ",".join(map(str, dims)) + "]"
    same_line(runner, 3, [path], f"{path}: node 'c' (Const): attr 'value': shape {shown} has a negative dim; a "
                                 "constant needs every dim's size")


@pytest.mark.parametrize("rank", [65, 1000, 100_000])
def test_more_dims_than_a_tensor_may_have(runner, tmp_path, rank):
    path = const_file(tmp_path, DT.DT_FLOAT, [1] * rank, float_val=[1.0])
    same_line(runner, 3, [path], f"{path}: node 'c' (Const): attr 'value': the shape has {rank} dims, more than "
                                 "the 64 a tensor may have")


def test_sixty_four_dims_still_load(runner, tmp_path):
    path = const_file(tmp_path, DT.DT_INT32, [1] * 64, int_val=[7])
    value = "[" * 64 + "7" + "]" * 64
    for name, result in both(runner, path).items():
        assert result == (0, f"c:0 int32 [{','.join(['1'] * 64)}] = {value}\n", ""), name


@pytest.mark.parametrize("dims, size", [
    ([2 ** 31, 2 ** 31], "more than 16.0 EiB"),  # 2^64 bytes: past what an unsigned 64-bit product holds
    ([2 ** 62, 2 ** 62], "more than 16.0 EiB"),
    ([2 ** 40] * 3, "more than 16.0 EiB"),       # the count itself past int64
    ([2 ** 63 - 1, 2], "more than 16.0 EiB"),
    ([2 ** 20, 2 ** 20, 2 ** 20], "8.0 EiB"),
])
def test_huge_shapes_and_counts_past_int64(runner, tmp_path, dims, size):
    """Refused before anything is allocated, in the same words and with the same exit code: a
    tensor over the limit is a run error (4), a Const's too."""
    path = const_file(tmp_path, DT.DT_INT64, dims, int64_val=[1])
    limit = limits.format_bytes(limits.default_max_tensor_bytes())
    text = (f"{path}: node 'c' (Const): attr 'value': tensor [{','.join(map(str, dims))}] int64 would take {size}, "
            f"over the limit of {limit} (set GRAPHDEF_MAX_TENSOR_BYTES to change it)")
    for name, (code, stdout, stderr) in both(runner, path).items():
        assert (stdout, stderr) == ("", f"{name}: {text}\n"), name
        assert code == 4, name


@pytest.mark.parametrize("dtype, field, values, shown", [
    (DT.DT_FLOAT, "int_val", [1, 2, 3], "[0.0, 0.0, 0.0]"),      # the wrong field: TF reads zeros
    (DT.DT_INT32, "float_val", [1.5], "[0, 0, 0]"),
    (DT.DT_FLOAT, "float_val", [1, 2, 3, 4, 5], "[1.0, 2.0, 3.0]"),  # too many: the first count
    (DT.DT_FLOAT, "float_val", [1, 2], "[1.0, 2.0, 2.0]"),         # too few: the last repeats
    (DT.DT_INT8, "int_val", [1000, -1000, 127], "[-24, 24, 127]"),  # out of range: the low bits
])
def test_fills_that_disagree_with_the_dtype_read_alike(runner, tmp_path, dtype, field, values, shown):
    path = const_file(tmp_path, dtype, [3], **{field: values})
    name = {DT.DT_FLOAT: "float32", DT.DT_INT32: "int32", DT.DT_INT8: "int8"}[dtype]
    for runtime, result in both(runner, path).items():
        assert result == (0, f"c:0 {name} [3] = {shown}\n", ""), runtime


def test_half_bits_out_of_range_keep_their_low_16_bits(tmp_path):
    """half_val holds bits in int32s; graphrun-cc holds no halves, graphdef reads the low bits."""
    path = const_file(tmp_path, DT.DT_HALF, [3], half_val=[70000, -5, 0x3C00])
    value = load(path).get_operation_by_name("c").get_attr("value")
    expected = np.array([70000 & 0xFFFF, -5 & 0xFFFF, 0x3C00], np.uint16).view(np.float16)
    np.testing.assert_array_equal(value.view(np.uint16), expected.view(np.uint16))


def placeholder_file(tmp_path):
    graph = graph_pb2.GraphDef()
    x = graph.node.add(name="x", op="Placeholder")
    x.attr["dtype"].type = DT.DT_FLOAT
    x.attr["shape"].shape.unknown_rank = True
    y = graph.node.add(name="y", op="Neg", input=["x"])
    y.attr["T"].type = DT.DT_FLOAT
    path = tmp_path / "feed.pb"
    path.write_bytes(graph.SerializeToString())
    return path


@pytest.mark.parametrize("rank", [65, 1000])
def test_a_random_shape_of_too_many_dims(runner, tmp_path, rank):
    same_line(runner, 2, [placeholder_file(tmp_path), "--random", "--shape", "x=" + ",".join(["1"] * rank)],
              f"--shape x: the shape has {rank} dims, more than the 64 a tensor may have")


@pytest.mark.parametrize("dim", [str(2 ** 63), "1" + "0" * 40])
def test_a_random_shape_past_int64(runner, tmp_path, dim):
    same_line(runner, 2, [placeholder_file(tmp_path), "--random", "--shape", f"x=2,{dim}"],
              f"--shape x: '2,{dim}' is not a list of sizes such as 8,784")
