"""build/graphrun-cc against hostile input: every case must end in exactly one
"graphrun-cc: ..." line naming the node (or field, or file) at fault and exit 2 (usage or
feed), 3 (model) or 4 (run) -- never a crash, a hang, or an allocation past the limit.

The hand-written cases cover the classic ways a GraphDef or a feed can lie; the cases
after them are findings of the fuzzer (fuzz/cc, `make fuzz-cc-run`), each kept as the
smallest graph that reproduced it. Graphs are built with the generated protobuf classes,
as in tests/support/cc_helpers.py.
"""
import struct

import numpy as np
import pytest

from graphdef._proto import graph_pb2
from tests.support.cc_helpers import Graph, ints_attr, output, run_cc, str_attr, tensor_proto, type_attr

TB = "TiB"  # what a terabyte-scale refusal prints


def run(runner, *args, env=None, timeout=120):
    """run_cc with the size limit at its default unless `env` sets it."""
    return run_cc(runner, *args, env={"GRAPHDEF_MAX_TENSOR_BYTES": None, **(env or {})}, timeout=timeout)


def refused(runner, code, *args, mentions=(), env=None):
    """The one stderr line of a run that must exit with `code`, naming everything in `mentions`."""
    got, stdout, stderr = run(runner, *args, env=env)
    assert got == code, f"exit {got}, expected {code}: {stderr[-2000:]}"
    assert stdout == ""
    assert stderr.endswith("\n") and stderr.count("\n") == 1, f"not one line: {stderr[-2000:]!r}"
    line = stderr.rstrip("\n")
    assert line.startswith("graphrun-cc: ") and "internal error" not in line, line
    for text in mentions:
        assert text in line, (text, line)
    return line


def save(graph, tmp_path, name="model.pb"):
    return graph.save(tmp_path / name)


def int_const(g, name, values, dtype=np.int64):
    return g.const(name, np.asarray(values, dtype))


# -- tensors past the size limit, refused before allocating ----------------------------------

def test_const_claiming_shape_2_31_squared(runner, tmp_path):
    g = Graph()
    proto = graph_pb2.TensorProto(dtype=graph_pb2.DataType.DT_FLOAT)
    proto.tensor_shape.dim.add().size = 2**31
    proto.tensor_shape.dim.add().size = 2**31
    proto.float_val.append(1.0)
    g.node("c", "Const", dtype=type_attr(np.float32), value=graph_pb2.AttrValue(tensor=proto))
    refused(runner, 4, save(g, tmp_path),
            mentions=["node 'c' (Const)", "[2147483648,2147483648] float32 would take more than 16.0 EiB",
                      "GRAPHDEF_MAX_TENSOR_BYTES"])


def test_const_shape_product_overflowing_int64(runner, tmp_path):
    g = Graph()
    proto = graph_pb2.TensorProto(dtype=graph_pb2.DataType.DT_INT64)
    for _ in range(3):
        proto.tensor_shape.dim.add().size = 2**40
    proto.int64_val.append(1)
    g.node("c", "Const", dtype=type_attr(np.int64), value=graph_pb2.AttrValue(tensor=proto))
    refused(runner, 4, save(g, tmp_path), mentions=["node 'c' (Const)", "more than 16.0 EiB"])


def test_the_limit_comes_from_the_environment(runner, tmp_path):
    g = Graph()
    int_const(g, "dims", [1024, 1024], np.int32)
    g.const("v", 1.0, np.float32)
    g.op("big", "Fill", ["dims", "v"], np.float32)
    model = save(g, tmp_path)
    line = refused(runner, 4, model, env={"GRAPHDEF_MAX_TENSOR_BYTES": "1000000"})
    assert line == ("graphrun-cc: node 'big' (Fill): output [1024,1024] float32 would take 4.0 MiB, "
                    "over the limit of 976.6 KiB (set GRAPHDEF_MAX_TENSOR_BYTES to change it)")
    assert run(runner, model, env={"GRAPHDEF_MAX_TENSOR_BYTES": "4194304"})[0] == 0
    refused(runner, 2, model, env={"GRAPHDEF_MAX_TENSOR_BYTES": "lots"},
            mentions=["GRAPHDEF_MAX_TENSOR_BYTES must be a whole number", "'lots'"])


def huge_fill(g, name="big"):
    int_const(g, "dims", [1_000_000, 1_000_000])
    g.const("v", 1.0, np.float32)
    return g.op(name, "Fill", ["dims", "v"], np.float32, index_type=type_attr(np.int64))


def test_fill_terabytes(runner, tmp_path):
    g = Graph()
    huge_fill(g)
    line = refused(runner, 4, save(g, tmp_path))
    assert line.startswith("graphrun-cc: node 'big' (Fill): output [1000000,1000000] float32 would take 3.6 TiB, "
                           "over the limit of "), line
    assert line.endswith(" (set GRAPHDEF_MAX_TENSOR_BYTES to change it)"), line


def test_tile_terabytes(runner, tmp_path):
    g = Graph()
    g.const("x", np.ones((2, 2), np.float32))
    int_const(g, "m", [1_000_000, 1_000_000], np.int32)
    g.op("t", "Tile", ["x", "m"], np.float32, Tmultiples=type_attr(np.int32))
    refused(runner, 4, save(g, tmp_path), mentions=["node 't' (Tile)", TB])


def test_tile_multiples_overflowing_int64(runner, tmp_path):
    g = Graph()
    g.const("x", np.ones((3, 3), np.float32))
    int_const(g, "m", [2**62, 2**62])
    g.op("t", "Tile", ["x", "m"], np.float32, Tmultiples=type_attr(np.int64))
    refused(runner, 4, save(g, tmp_path), mentions=["node 't' (Tile)"])


def test_range_terabytes(runner, tmp_path):
    g = Graph()
    int_const(g, "start", 0)
    int_const(g, "limit", 10**12)
    int_const(g, "delta", 1)
    g.node("r", "Range", ["start", "limit", "delta"], Tidx=type_attr(np.int64))
    refused(runner, 4, save(g, tmp_path), mentions=["node 'r' (Range)", "7.3 TiB"])


def test_reshape_to_terabytes(runner, tmp_path):
    g = Graph()
    g.const("x", np.ones(4, np.float32))
    int_const(g, "shape", [1_000_000, 1_000_000])
    g.op("r", "Reshape", ["x", "shape"], np.float32, Tshape=type_attr(np.int64))
    refused(runner, 4, save(g, tmp_path), mentions=["node 'r' (Reshape)"])


def test_reshape_with_two_unknown_dims(runner, tmp_path):
    g = Graph()
    g.const("x", np.ones(4, np.float32))
    int_const(g, "shape", [-1, -1], np.int32)
    g.op("r", "Reshape", ["x", "shape"], np.float32)
    refused(runner, 4, save(g, tmp_path), mentions=["node 'r' (Reshape)", "-1"])


def test_one_hot_terabytes(runner, tmp_path):
    g = Graph()
    int_const(g, "indices", np.zeros(1_000_000, np.int32), np.int32)
    int_const(g, "depth", 1_000_000, np.int32)
    g.const("on", 1.0, np.float32)
    g.const("off", 0.0, np.float32)
    g.node("h", "OneHot", ["indices", "depth", "on", "off"], T=type_attr(np.float32), TI=type_attr(np.int32))
    refused(runner, 4, save(g, tmp_path), mentions=["node 'h' (OneHot)", TB])


def test_pad_terabytes(runner, tmp_path):
    g = Graph()
    g.const("x", np.ones((2, 2), np.float32))
    int_const(g, "p", [[0, 1_000_000], [0, 1_000_000]])
    g.op("p2", "Pad", ["x", "p"], np.float32, Tpaddings=type_attr(np.int64))
    refused(runner, 4, save(g, tmp_path), mentions=["node 'p2' (Pad)", TB])


def test_pad_overflowing_int64(runner, tmp_path):
    g = Graph()
    g.const("x", np.ones((2, 2), np.float32))
    int_const(g, "p", [[2**62, 2**62], [0, 0]])
    g.op("p2", "Pad", ["x", "p"], np.float32, Tpaddings=type_attr(np.int64))
    refused(runner, 4, save(g, tmp_path), mentions=["node 'p2' (Pad)"])


def test_broadcast_to_terabytes(runner, tmp_path):
    g = Graph()
    g.const("x", np.float32(1))
    int_const(g, "shape", [1_000_000, 1_000_000])
    g.op("b", "BroadcastTo", ["x", "shape"], np.float32, Tidx=type_attr(np.int64))
    refused(runner, 4, save(g, tmp_path), mentions=["node 'b' (BroadcastTo)", TB])


@pytest.mark.parametrize("op", ["ZerosLike", "OnesLike"])
def test_zeros_like_of_a_terabyte_input(runner, tmp_path, op):
    # The input is refused first (it is as large as the output would be); the
    # message names the node that would have allocated it.
    g = Graph()
    huge_fill(g)
    g.op("z", op, ["big"], np.float32)
    refused(runner, 4, save(g, tmp_path), mentions=["node 'big' (Fill)", TB])


def test_random_feed_with_a_huge_shape(runner, tmp_path):
    g = Graph()
    g.placeholder("x", np.float32, [-1, -1])
    g.op("y", "Neg", ["x"], np.float32)
    refused(runner, 2, save(g, tmp_path), "--random", "--shape", "x=1000000,1000000",
            mentions=["--shape x: random value [1000000,1000000] float32 would take 3.6 TiB"])
    refused(runner, 2, save(g, tmp_path), "--random", "--shape", f"x={2**62},{2**62}",
            mentions=["--shape x: random value", "more than 16.0 EiB"])


# -- graph structure ---------------------------------------------------------------------------

@pytest.mark.slow
def test_million_node_chain(runner, tmp_path):
    # Loading, checking and planning are iterative: no stack overflow, and it runs.
    g = graph_pb2.GraphDef()
    g.versions.producer = 2474
    first = g.node.add(name="n0", op="Const")
    first.attr["dtype"].CopyFrom(type_attr(np.float32))
    first.attr["value"].CopyFrom(graph_pb2.AttrValue(tensor=tensor_proto(np.float32(1))))
    template = graph_pb2.NodeDef(op="Neg")
    template.attr["T"].CopyFrom(type_attr(np.float32))
    for i in range(1, 1_000_000):
        node = g.node.add()
        node.CopyFrom(template)
        node.name = f"n{i}"
        node.input.append(f"n{i - 1}")
    path = tmp_path / "chain.pb"
    path.write_bytes(g.SerializeToString())
    code, stdout, stderr = run(runner, path, timeout=600)
    assert code == 0, stderr
    assert stdout == "n999999:0 float32 [] = -1.0\n"  # 999,999 negations


def test_dangling_output_index(runner, tmp_path):
    g = Graph()
    g.const("x", np.float32(1))
    g.op("y", "Neg", ["x:99"], np.float32)
    refused(runner, 3, save(g, tmp_path), mentions=["node 'y' (Neg)", "'x:99'", "output 99"])


def test_cycle(runner, tmp_path):
    g = Graph()
    g.op("a", "Neg", ["b"], np.float32)
    g.op("b", "Neg", ["a"], np.float32)
    refused(runner, 3, save(g, tmp_path), mentions=["cycle", "'a' -> 'b' -> 'a'"])


def test_duplicate_names(runner, tmp_path):
    g = Graph()
    g.const("x", np.float32(1))
    g.const("x", np.float32(2))
    refused(runner, 3, save(g, tmp_path), mentions=["node 'x': the name is not unique"])


@pytest.mark.parametrize("size, mention", [(3, "holds 3 bytes"), (20, "holds 20 bytes")])
def test_tensor_content_shorter_or_longer_than_the_shape(runner, tmp_path, size, mention):
    g = Graph()
    proto = graph_pb2.TensorProto(dtype=graph_pb2.DataType.DT_FLOAT, tensor_content=b"\0" * size)
    proto.tensor_shape.dim.add().size = 4
    g.node("c", "Const", dtype=type_attr(np.float32), value=graph_pb2.AttrValue(tensor=proto))
    refused(runner, 3, save(g, tmp_path), mentions=["node 'c' (Const)", mention, "needs 16"])


def test_file_past_protobufs_2gb_limit(runner, tmp_path):
    # Sparse: the file claims 3 GB but takes almost no disk.
    path = tmp_path / "huge.pb"
    with open(path, "wb") as f:
        f.truncate(3 * 2**30)
    refused(runner, 3, path, mentions=[str(path), "over protobuf's 2 GB limit"])


# -- attrs and inputs that kernels must refuse ---------------------------------------------------

@pytest.mark.parametrize("attrs, mention", [
    ({"strides": [1, 0, 1, 1]}, "strides"),
    ({"dilations": [1, 0, 1, 1]}, "dilations"),
])
def test_conv2d_stride_or_dilation_zero(runner, tmp_path, attrs, mention):
    g = Graph()
    g.const("x", np.ones((1, 4, 4, 1), np.float32))
    g.const("w", np.ones((2, 2, 1, 1), np.float32))
    full = {"strides": [1, 1, 1, 1], "dilations": [1, 1, 1, 1]}
    full.update(attrs)
    g.op("conv", "Conv2D", ["x", "w"], np.float32, padding=str_attr("SAME"),
         **{k: ints_attr(v) for k, v in full.items()})
    refused(runner, 3, save(g, tmp_path), mentions=["node 'conv' (Conv2D)", mention])


@pytest.mark.parametrize("op", ["Div", "FloorDiv", "FloorMod"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_integer_division_by_zero(runner, tmp_path, op, dtype):
    g = Graph()
    g.const("x", np.asarray([7, 8], dtype))
    g.const("y", np.asarray([1, 0], dtype))
    g.op("d", op, ["x", "y"], dtype)
    refused(runner, 4, save(g, tmp_path), mentions=[f"node 'd' ({op})", "integer division by zero"])


def test_gather_out_of_range(runner, tmp_path):
    g = Graph()
    g.const("params", np.ones((3, 2), np.float32))
    int_const(g, "indices", [0, 3], np.int32)
    int_const(g, "axis", 0, np.int32)
    g.node("g", "GatherV2", ["params", "indices", "axis"], Tparams=type_attr(np.float32),
           Tindices=type_attr(np.int32), Taxis=type_attr(np.int32))
    refused(runner, 4, save(g, tmp_path), mentions=["node 'g' (GatherV2)", "3"])


def test_split_num_split_zero(runner, tmp_path):
    g = Graph()
    int_const(g, "axis", 0, np.int32)
    g.const("x", np.ones(4, np.float32))
    g.op("s", "Split", ["axis", "x"], np.float32, num_split=graph_pb2.AttrValue(i=0))
    refused(runner, 3, save(g, tmp_path), mentions=["node 's' (Split)", "num_split"])


# -- feeds -----------------------------------------------------------------------------------

def write_npy(path, descr, shape, payload):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload)
    return path


def feed_graph(tmp_path):
    g = Graph()
    g.placeholder("x", np.float32, "unknown")
    g.op("y", "Neg", ["x"], np.float32)
    return save(g, tmp_path)


def test_npy_with_a_lying_header(runner, tmp_path):
    npy = write_npy(tmp_path / "lie.npy", "<f4", "(1000, 1000)", struct.pack("<2f", 1, 2))
    refused(runner, 2, feed_graph(tmp_path), "--feed", f"x=@{npy}", mentions=["--feed x: "])


def test_npy_with_a_lying_huge_header(runner, tmp_path):
    npy = write_npy(tmp_path / "lie.npy", "<f4", "(100000000000, 100000000000)", struct.pack("<f", 1))
    refused(runner, 4, feed_graph(tmp_path), "--feed", f"x=@{npy}", mentions=["--feed x: ", "over the limit"])


def test_pickled_object_npy_is_refused_unread(runner, tmp_path):
    # A pickle that would run `touch <marker>` if anything unpickled it.
    marker = tmp_path / "pwned"
    payload = (b"\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94\x8c\x06system\x94\x93\x94"
               + b"\x8c" + bytes([len(f"touch {marker}")]) + f"touch {marker}".encode() + b"\x94\x85\x94R\x94.")
    npy = write_npy(tmp_path / "obj.npy", "|O", "(1,)", payload)
    refused(runner, 2, feed_graph(tmp_path), "--feed", f"x=@{npy}",
            mentions=["--feed x: ", "Python objects", "ever unpickled"])
    assert not marker.exists()


def test_empty_tensor_whose_other_dims_overflow(runner, tmp_path):
    # [0, 2**62, 2**62] holds nothing, but strides over it would overflow int64.
    g = Graph()
    int_const(g, "dims", [0, 2**62, 2**62])
    g.const("v", 1.0, np.float32)
    g.op("f", "Fill", ["dims", "v"], np.float32, index_type=type_attr(np.int64))
    int_const(g, "perm", [2, 1, 0], np.int32)
    g.op("t", "Transpose", ["f", "perm"], np.float32)
    refused(runner, 4, save(g, tmp_path),
            mentions=["node 'f' (Fill)", "is empty, but its other dims would take more than 16.0 EiB"])


def test_empty_placeholder_with_huge_other_dims(runner, tmp_path):
    # Fuzzer finding: a random feed of shape [10**12, 2, 2, 0] holds nothing, but printing
    # it wrote 4*10**12 "[]" (a hang). Its other dims are held to the size limit.
    g = Graph()
    g.placeholder("p", np.float32, [10**12, 2, 2, 0])
    g.op("y", "Neg", ["p"], np.float32)
    refused(runner, 2, save(g, tmp_path), "--random",
            mentions=["--random p: random value [1000000000000,2,2,0] float32 is empty, but its other dims would "
                      "take 14.6 TiB"])


def test_inspect_reshape_whose_target_overflows(runner, tmp_path):
    # Fuzzer finding (UBSan): inspect's shape inference multiplied a Reshape's constant
    # target without overflow checks. The shape is now simply unknown; running refuses it.
    g = Graph()
    g.placeholder("x", np.float32, [2, 3])
    int_const(g, "shape", [2**31 - 1, 2**62 - 2**31 + 1, 2**31 - 1, -1])
    g.op("r", "Reshape", ["x", "shape"], np.float32, Tshape=type_attr(np.int64))
    model = save(g, tmp_path)
    code, stdout, stderr = run(runner, "inspect", model)
    assert code == 0 and stderr == "", stderr
    assert "r:0  float32  <unknown>" in stdout, stdout
    refused(runner, 4, model, "--random", mentions=["node 'r' (Reshape)", "cannot reshape [2,3]"])


# -- window geometry (fuzzer and hand-fuzzed findings) ---------------------------------------

def pool_graph(op, ksize, strides, padding):
    g = Graph()
    g.const("x", np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1))
    g.op("p", op, ["x"], np.float32, ksize=ints_attr(ksize), strides=ints_attr(strides), padding=str_attr(padding))
    return g


@pytest.mark.parametrize("op, ksize, strides, padding, mention", [
    # UBSan: 3 + INT64_MAX in SAME padding's arithmetic.
    ("MaxPool", [1, 2**63 - 1, 1, 1], [1, 1, 1, 1], "SAME", "ksize"),
    # UBSan: 2 + INT64_MAX in VALID's span.
    ("AvgPool", [1, 2, 2, 1], [1, 2**63 - 1, 1, 1], "VALID", "strides"),
    # TF holds these attrs as int32.
    ("MaxPool", [1, 2**31, 1, 1], [1, 1, 1, 1], "SAME", "ksize"),
    ("MaxPool", [1, 65536, 65536, 1], [1, 1, 1, 1], "SAME", "more than 2147483647 taps"),
])
def test_pool_attrs_past_int32_are_refused(runner, tmp_path, op, ksize, strides, padding, mention):
    refused(runner, 3, save(pool_graph(op, ksize, strides, padding), tmp_path), mentions=["node 'p'", mention])


@pytest.mark.parametrize("op, expected", [("MaxPool", "[[[[12.0], [13.0], [14.0], [15.0]]]]"),
                                          ("AvgPool", "[[[[6.0], [7.0], [8.0], [9.0]]]]")])
def test_pool_window_far_larger_than_its_input_runs_fast(runner, tmp_path, op, expected):
    # Timeout finding: a SAME window of 2**31-1 rows over 4 rows looped over every tap;
    # loops now cover only the taps inside the input, so this takes milliseconds.
    model = save(pool_graph(op, [1, 2**31 - 1, 1, 1], [1, 4, 1, 1], "SAME"), tmp_path)
    code, stdout, stderr = run(runner, model, timeout=20)
    assert code == 0, stderr
    assert stdout == f"p:0 float32 [1,1,4,1] = {expected}\n"


def test_conv2d_stride_past_int32_is_refused(runner, tmp_path):
    g = Graph()
    g.const("x", np.ones((1, 4, 4, 1), np.float32))
    g.const("w", np.ones((2, 2, 1, 1), np.float32))
    g.op("conv", "Conv2D", ["x", "w"], np.float32, padding=str_attr("VALID"),
         strides=ints_attr([1, 2**63 - 1, 1, 1]), dilations=ints_attr([1, 1, 1, 1]))
    refused(runner, 3, save(g, tmp_path), mentions=["node 'conv' (Conv2D)", "strides"])


def test_inspect_random_uniform_with_a_huge_shape_operand(runner, tmp_path):
    # Fuzzer finding (ASan, allocation of 7.3 TiB): inspect made one unknown dim per element
    # of RandomUniform's 1-D shape operand, here 10**12 of them. Past TF's 254 dims the
    # rank is now unknown.
    g = Graph()
    g.placeholder("x", np.int64, [10**12])
    g.node("r", "RandomUniform", ["x"], dtype=type_attr(np.float64), T=type_attr(np.int64))
    model = save(g, tmp_path)
    code, stdout, stderr = run(runner, "inspect", model)
    assert code == 0 and stderr == "", stderr
    assert "r:0  float64  <unknown>" in stdout, stdout
    refused(runner, 2, model, "--random", mentions=["--random x: random value", "7.3 TiB"])


def test_conv2d_backprop_input_with_a_filter_of_the_wrong_rank(runner, tmp_path):
    # Fuzzer finding (ASan, heap-buffer-overflow): with the grouped backprop, a filter of rank 1
    # was indexed as 4 dims before any rank check; now the node's one error line.
    g = Graph()
    g.const("sizes", np.array([1, 4, 4, 1], np.int32))
    g.const("w", np.ones((2,), np.float32))
    g.const("dy", np.ones((1, 3, 3, 1), np.float32))
    g.op("dx", "Conv2DBackpropInput", ["sizes", "w", "dy"], np.float32, padding=str_attr("VALID"),
         strides=ints_attr([1, 1, 1, 1]), dilations=ints_attr([1, 1, 1, 1]))
    code, stdout, stderr = run(runner, save(g, tmp_path), "--no-optimize")
    assert code == 4 and stdout == "" and len(stderr.splitlines()) == 1, (code, stderr)
    assert "'dx'" in stderr and "filter [2]" in stderr, stderr


def test_half_const_without_a_value_read_as_a_shape(runner, tmp_path):
    # Fuzzer finding (CI): a Const of a dtype graphrun-cc cannot hold is unsupported and
    # may lack attr 'value'; inspect's shape inference still read it as RandomUniform's
    # shape operand ("internal error: key not found: value").
    g = Graph()
    g.node("c", "Const", dtype=graph_pb2.AttrValue(type=graph_pb2.DT_HALF))
    g.node("r", "RandomUniform", ["c"], dtype=type_attr(np.float32), T=type_attr(np.int32))
    model = save(g, tmp_path)
    code, stdout, stderr = run(runner, "inspect", model)
    assert code == 0 and stderr == "", stderr
    assert "r:0  ?  ?" in stdout, stdout  # it reads an unsupported node: dtype unknown
    refused(runner, 3, model, mentions=["half", "'c' (Const)"])


def test_strided_slice_whose_ellipsis_mask_is_int64_min(runner, tmp_path):
    # Fuzzer finding (UBSan): the one-ellipsis check computed mask - 1 in signed arithmetic.
    # Bit 63 is past any dim TF allows, so the mask names no ellipsis: x[0:1].
    g = Graph()
    g.const("x", np.arange(6, dtype=np.float32).reshape(2, 3))
    for name in ("b", "e", "s"):
        int_const(g, name, {"b": [0], "e": [1], "s": [1]}[name], np.int32)
    g.op("y", "StridedSlice", ["x", "b", "e", "s"], np.float32, Index=type_attr(np.int32),
         ellipsis_mask=graph_pb2.AttrValue(i=-2**63))
    np.testing.assert_array_equal(output(runner, save(g, tmp_path), "--fetch", "y"), [[0.0, 1.0, 2.0]])
