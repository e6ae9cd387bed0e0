"""Hostile input to the Python runtime: every case ends in one clear line, never a traceback,
crash, hang or unbounded allocation. Each is checked through the public API (tf.load,
Session.run) and through graphrun (in-process), as the fuzzer in fuzz/py found or the
hardening brief named them."""

import io
import pickle
import struct
import zipfile

import numpy as np
import pytest

import graphdef as tf
from graphdef.framework import limits
from graphdef._proto import graph_pb2
from graphdef.framework.errors import InvalidArgumentError, ResourceExhaustedError
from graphdef.wire.serialize import GraphFileError, load
from tests.support.cc_helpers import fails as cc_fails
from tests.support.graphrun_helpers import fails
from tests.support.pbtxt_helpers import LIMIT_WORDS, TB, const, load_fails, node, one_line, run_file, write_pbtxt



# -- tensors over the size limit are refused before allocating ---------------------------------

def test_const_claiming_2_31_by_2_31_is_refused_when_loading(tmp_path, capsys):
    path = write_pbtxt(tmp_path, const("big", "DT_FLOAT", (2 ** 31, 2 ** 31), [1.0], "float_val"))
    with pytest.raises(ResourceExhaustedError) as e:
        load(path)
    assert one_line(e.value).endswith(
        "node 'big' (Const): attr 'value': tensor [2147483648,2147483648] float32 would take more than 16.0 EiB, "
        f"over the limit of {limits.format_bytes(limits.max_tensor_bytes())} {LIMIT_WORDS}")
    fails(capsys, 4, path, mentions=["node 'big' (Const)", "16.0 EiB"])


SIZE_CASES = {
    "Fill": const("dims", shape=(2,), values=(10 ** 6, 10 ** 6)) + const("v", "DT_FLOAT", (), [1.0], "float_val")
    + node("big", "Fill", ["dims", "v"], T="type: DT_FLOAT"),
    "Tile": const("x", "DT_FLOAT", (1,), [1.0], "float_val") + const("m", "DT_INT64", (1,), [10 ** 12], "int64_val")
    + node("big", "Tile", ["x", "m"], T="type: DT_FLOAT", Tmultiples="type: DT_INT64"),
    "Range": const("a", "DT_INT64", (), [0], "int64_val") + const("b", "DT_INT64", (), [10 ** 12], "int64_val")
    + const("d", "DT_INT64", (), [1], "int64_val") + node("big", "Range", ["a", "b", "d"], Tidx="type: DT_INT64"),
    "Reshape": node("x", "Placeholder", dtype="type: DT_FLOAT", shape="shape { dim { size: -1 } }")
    + const("s", shape=(2,), values=(10 ** 6, 10 ** 6))
    + node("big", "Reshape", ["x", "s"], T="type: DT_FLOAT", Tshape="type: DT_INT32"),
    "OneHot": const("i", shape=(1000,), values=(1,)) + const("depth", values=(10 ** 9,))
    + const("on", "DT_FLOAT", (), [1.0], "float_val") + const("off", "DT_FLOAT", (), [0.0], "float_val")
    + node("big", "OneHot", ["i", "depth", "on", "off"], T="type: DT_FLOAT", TI="type: DT_INT32"),
    "Pad": const("x", "DT_FLOAT", (1,), [1.0], "float_val") + const("p", "DT_INT64", (1, 2), [0, 10 ** 12], "int64_val")
    + node("big", "Pad", ["x", "p"], T="type: DT_FLOAT", Tpaddings="type: DT_INT64"),
    "BroadcastTo": const("x", "DT_FLOAT", (1,), [1.0], "float_val") + const("s", shape=(2,), values=(10 ** 6, 10 ** 6))
    + node("big", "BroadcastTo", ["x", "s"], T="type: DT_FLOAT", Tidx="type: DT_INT32"),
}


@pytest.mark.slow
@pytest.mark.parametrize("op_type", sorted(SIZE_CASES))
def test_value_sized_outputs_over_the_limit_are_refused(tmp_path, capsys, op_type):
    path = write_pbtxt(tmp_path, SIZE_CASES[op_type])
    feeds = {"x:0": np.ones(4, np.float32)} if op_type == "Reshape" else None
    with pytest.raises(ResourceExhaustedError, match=rf"^node 'big' \({op_type}\): output \[[0-9,]+\] \w+ "
                                                     rf"would take {TB}, over the limit of .*GiB"):
        run_file(path, "big:0", feeds)
    extra = ["--feed", "x=[1,2,3,4]"] if op_type == "Reshape" else []
    fails(capsys, 4, path, *extra, mentions=[f"node 'big' ({op_type})", "TiB", "GRAPHDEF_MAX_TENSOR_BYTES"])


def test_fill_with_fed_dims_is_refused_at_run_time():
    g = tf.Graph()
    with g.as_default():
        dims = tf.placeholder(tf.int64, [None], name="dims")
        big = tf.fill(dims, 1.0, name="big")
    with tf.Session(graph=g) as sess, pytest.raises(ResourceExhaustedError) as e:
        sess.run(big, {dims: [10 ** 6, 10 ** 6]})
    assert str(e.value).startswith("node 'big' (Fill): output [1000000,1000000] float32 would take 3.6 TiB")


def test_zeros_of_terabytes_is_refused_naming_the_node():
    g = tf.Graph()
    with g.as_default():
        big = tf.zeros([10 ** 6, 10 ** 6], name="big")
    with tf.Session(graph=g) as sess, pytest.raises(ResourceExhaustedError,
                                                    match=r"^node 'big' \(Fill\): output \[1000000,1000000\] "
                                                          r"float32 would take 3\.6 TiB"):
        sess.run(big)


def test_the_limit_follows_the_environment(monkeypatch):
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", str(1 << 20))
    g = tf.Graph()
    with g.as_default():
        ok = tf.zeros([256, 256], name="ok")             # 256 KiB
        big = tf.zeros([1024, 1024], name="big")         # 4 MiB
    with tf.Session(graph=g) as sess:
        assert sess.run(ok).shape == (256, 256)
        with pytest.raises(ResourceExhaustedError, match=r"4\.0 MiB, over the limit of 1\.0 MiB"):
            sess.run(big)
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", "lots")
    with pytest.raises(InvalidArgumentError, match="GRAPHDEF_MAX_TENSOR_BYTES must be a whole number"):
        limits.max_tensor_bytes()


def test_a_huge_range_loads_without_allocating(tmp_path):
    path = write_pbtxt(tmp_path, SIZE_CASES["Range"])
    graph = load(path)  # its shape is counted, not built
    assert graph.get_tensor_by_name("big:0").shape.as_list() == [10 ** 12]


# -- graphs that are wrong ---------------------------------------------------------------------

def test_reshape_with_two_minus_ones(tmp_path, capsys):
    x = const("x", "DT_FLOAT", (4,), [1.0], "float_val")
    load_fails(tmp_path, capsys, x + const("s", shape=(2,), values=(-1, -1))
                + node("r", "Reshape", ["x", "s"], T="type: DT_FLOAT"), "node 'r' (Reshape): shape", "at most one -1")
    fed = x + node("s", "Placeholder", dtype="type: DT_INT32", shape="shape { dim { size: 2 } }") + \
        node("r", "Reshape", ["x", "s"], T="type: DT_FLOAT")
    path = write_pbtxt(tmp_path, fed, "fed.pb")
    with pytest.raises(InvalidArgumentError, match=r"^node 'r' \(Reshape\): "):
        run_file(path, "r:0", {"s:0": [-1, -1]})
    fails(capsys, 4, path, "--feed", "s=[-1,-1]", mentions=["node 'r' (Reshape)"])


@pytest.mark.parametrize("attr", ["strides", "dilations"])
def test_conv2d_with_a_zero_stride_or_dilation(tmp_path, capsys, attr):
    text = (const("x", "DT_FLOAT", (1, 4, 4, 1), [1.0], "float_val") + const("f", "DT_FLOAT", (2, 2, 1, 1), [1.0],
                                                                               "float_val")
            + node("c", "Conv2D", ["x", "f"], T="type: DT_FLOAT", padding='s: "VALID"',
                   **{"strides": "list { i: 1 i: 1 i: 1 i: 1 }", attr: "list { i: 1 i: 0 i: 0 i: 1 }"}))
    load_fails(tmp_path, capsys, text, f"node 'c' (Conv2D): {attr} [1, 0, 0, 1] must be positive")


@pytest.mark.slow
@pytest.mark.parametrize("op_type", ["Div", "FloorDiv", "FloorMod"])
def test_integer_division_by_zero(tmp_path, capsys, op_type):
    text = (const("a", shape=(2,), values=(1, 2)) + node("b", "Placeholder", dtype="type: DT_INT32")
            + node("q", op_type, ["a", "b"], T="type: DT_INT32"))
    path = write_pbtxt(tmp_path, text)
    with pytest.raises(InvalidArgumentError, match=rf"^node 'q' \({op_type}\): integer division by zero$"):
        run_file(path, "q:0", {"b:0": np.array([0, 1], np.int32)})
    fails(capsys, 4, path, "--feed", "b=[0,1]", mentions=[f"node 'q' ({op_type}): integer division by zero"])


def test_gather_with_out_of_range_indices(tmp_path, capsys):
    text = (const("p", "DT_FLOAT", (2,), [1.0, 2.0], "float_val") + node("i", "Placeholder", dtype="type: DT_INT32")
            + const("axis", values=(0,))
            + node("g", "GatherV2", ["p", "i", "axis"], Tparams="type: DT_FLOAT", Tindices="type: DT_INT32",
                   Taxis="type: DT_INT32"))
    path = write_pbtxt(tmp_path, text)
    with pytest.raises(InvalidArgumentError, match=r"^node 'g' \(GatherV2\): index 5 is not in \[0, 2\)"):
        run_file(path, "g:0", {"i:0": np.array([5], np.int32)})
    fails(capsys, 4, path, "--feed", "i=[-1]", mentions=["node 'g' (GatherV2)", "index -1 is not in [0, 2)"])


def test_split_into_zero_parts(tmp_path, capsys):
    text = (const("axis", values=(0,)) + const("x", "DT_FLOAT", (2,), [1.0], "float_val")
            + node("s", "Split", ["axis", "x"], T="type: DT_FLOAT", num_split="i: 0"))
    load_fails(tmp_path, capsys, text, "node 's' (Split): attr 'num_split' is 0; Split needs at least 1")
    g = tf.Graph()
    with g.as_default(), pytest.raises(ValueError, match="attr 'num_split' is 0; Split needs at least 1"):
        tf.split(tf.constant([1.0, 2.0]), 0)


@pytest.mark.parametrize("count", [10 ** 12, 0, -1])
def test_count_attrs_that_do_not_match_the_inputs(tmp_path, capsys, count):
    """Found by the fuzzer: N=10**12 built a list of 10**12 dtypes (MemoryError); N=0 an IndexError."""
    text = (const("a", "DT_FLOAT", (), [1.0], "float_val")
            + node("p", "Pack", ["a"], T="type: DT_FLOAT", N=f"i: {count}"))
    words = (f"has 1 data input but Pack takes {count}" if count > 1 else f"attr 'N' is {count}; Pack needs at least 1")
    load_fails(tmp_path, capsys, text, f"node 'p' (Pack): {words}")


def test_an_output_count_too_large_to_build(tmp_path, capsys):
    text = (const("axis", values=(0,)) + const("x", "DT_FLOAT", (2,), [1.0], "float_val")
            + node("s", "Split", ["axis", "x"], T="type: DT_FLOAT", num_split="i: 1000000000000"))
    load_fails(tmp_path, capsys, text,
               "node 's' (Split): attr 'num_split' asks for 1000000000000 outputs; graphdef allows at most 1048576")


def test_an_unsupported_dtype_in_a_type_list(tmp_path, capsys):
    """Found by the fuzzer: a list(type) attr holding DT_INVALID raised TypeError from the loader."""
    text = const("a", "DT_FLOAT", (), [1.0], "float_val") + node("i", "IdentityN", ["a"], T="list { type: DT_INVALID }")
    load_fails(tmp_path, capsys, text,
               "node 'i' (IdentityN): attr 'T' lists DT_INVALID, a dtype graphdef does not support")


@pytest.mark.parametrize("content,words", [(b"\0" * 4, "holds 4 bytes"), (b"\0" * 12, "holds 12 bytes")])
def test_tensor_content_shorter_or_longer_than_the_shape(tmp_path, capsys, content, words):
    proto = graph_pb2.GraphDef()
    c = proto.node.add(name="c", op="Const")
    c.attr["dtype"].type = graph_pb2.DT_FLOAT
    tensor = c.attr["value"].tensor
    tensor.dtype = graph_pb2.DT_FLOAT
    tensor.tensor_shape.dim.add().size = 2
    tensor.tensor_content = content
    path = tmp_path / "model.pb"
    path.write_bytes(proto.SerializeToString())
    with pytest.raises(GraphFileError, match=rf"node 'c' \(Const\): attr 'value': tensor_content {words} but a "
                                             r"float32 tensor of shape \[2\] needs 8"):
        load(path)
    fails(capsys, 3, path, mentions=["node 'c' (Const)", words])


def test_an_input_naming_an_output_that_does_not_exist(tmp_path, capsys):
    text = const("x", "DT_FLOAT", (), [1.0], "float_val") + node("y", "Identity", ["x:99"], T="type: DT_FLOAT")
    load_fails(tmp_path, capsys, text, "node 'y' (Identity)", "input 'x:99' asks for output 99 of node 'x'")


def test_an_input_naming_no_node(tmp_path, capsys):
    text = node("y", "Identity", ["nowhere"], T="type: DT_FLOAT")
    load_fails(tmp_path, capsys, text, "node 'y' (Identity)", "input 'nowhere' names no node")


def test_a_cycle(tmp_path, capsys):
    text = (node("a", "Identity", ["b"], T="type: DT_FLOAT") + node("b", "Identity", ["a"], T="type: DT_FLOAT"))
    load_fails(tmp_path, capsys, text, "cycle")


def test_duplicate_names(tmp_path, capsys):
    text = const("x", "DT_FLOAT", (), [1.0], "float_val") + const("x", "DT_FLOAT", (), [2.0], "float_val")
    load_fails(tmp_path, capsys, text, "node 'x': the name is not unique")


@pytest.mark.slow
def test_a_long_chain_runs_without_recursion(tmp_path):
    """2*10**5 Identity nodes: far past Python's recursion limit (1000), so any recursive walk of
    the graph would fail; 10**6 works too but takes over a minute to import, too slow for the suite."""
    n = 2 * 10 ** 5
    proto = graph_pb2.GraphDef()
    c = proto.node.add(name="n0", op="Const")
    c.attr["dtype"].type = graph_pb2.DT_FLOAT
    c.attr["value"].tensor.dtype = graph_pb2.DT_FLOAT
    c.attr["value"].tensor.float_val.append(1.5)
    for i in range(1, n):
        node_def = proto.node.add(name=f"n{i}", op="Identity", input=[f"n{i - 1}"])
        node_def.attr["T"].type = graph_pb2.DT_FLOAT
    path = tmp_path / "chain.pb"
    path.write_bytes(proto.SerializeToString())
    assert run_file(path, f"n{n - 1}:0") == 1.5


def test_a_file_over_protobufs_2_gb_limit_is_refused_unread(tmp_path, capsys):
    path = tmp_path / "huge.pb"
    with open(path, "wb") as f:
        f.truncate(3 << 30)  # sparse: costs no disk
    with pytest.raises(GraphFileError, match=r"is 3221225472 bytes, over protobuf's 2 GB limit"):
        load(path)
    fails(capsys, 3, path, mentions=["over protobuf's 2 GB limit"])


# -- feeds --------------------------------------------------------------------------------------

@pytest.fixture
def feed_model(tmp_path):
    text = node("x", "Placeholder", dtype="type: DT_FLOAT", shape="shape { dim { size: -1 } }") + \
        node("y", "Identity", ["x"], T="type: DT_FLOAT")
    return write_pbtxt(tmp_path, text)


def _npy_header(descr, shape, text=None):
    """A version 1.0 .npy header of that dtype and shape, or holding `text` as its dict."""
    text = text or repr({"descr": descr, "fortran_order": False, "shape": tuple(shape)}).encode()
    text += b" " * (64 - (10 + len(text) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text


class _Tripwire:
    loaded = False

    def __reduce__(self):
        return (_trip, ())


def _trip():
    _Tripwire.loaded = True


def test_a_npy_whose_header_claims_terabytes(tmp_path, capsys, feed_model):
    bad = tmp_path / "big.npy"
    bad.write_bytes(_npy_header("<f4", [10 ** 12]) + bytes(16))
    fails(capsys, 4, feed_model, "--feed", f"x=@{bad}",
          mentions=["--feed x: '", "array [1000000000000] float32 would take 3.6 TiB"])


def test_a_npy_whose_header_claims_more_data_than_it_has(tmp_path, capsys, feed_model):
    bad = tmp_path / "short.npy"
    bad.write_bytes(_npy_header("<f4", [100]) + bytes(16))
    fails(capsys, 2, feed_model, "--feed", f"x=@{bad}", mentions=["(400 bytes of data) but only 16 bytes follow it"])


def test_object_and_pickled_npy_files_are_never_unpickled(tmp_path, capsys, feed_model):
    objects = tmp_path / "objects.npy"
    objects.write_bytes(_npy_header("|O", [1]) + pickle.dumps([_Tripwire()]))
    bare = tmp_path / "bare.npy"
    bare.write_bytes(pickle.dumps(_Tripwire()))
    fails(capsys, 2, feed_model, "--feed", f"x=@{objects}", mentions=["holds Python objects", "ever unpickled"])
    fails(capsys, 2, feed_model, "--feed", f"x=@{bare}", mentions=["--feed x"])
    archive = tmp_path / "feeds.npz"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("x.npy", _npy_header("|O", [1]) + pickle.dumps([_Tripwire()]))
    fails(capsys, 2, feed_model, "--feeds", archive, mentions=["'x'", "holds Python objects"])
    assert not _Tripwire.loaded


def test_an_npz_member_whose_header_lies(tmp_path, capsys, feed_model):
    archive = tmp_path / "feeds.npz"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("x.npy", _npy_header("<f8", [10 ** 6, 10 ** 6]) + bytes(8))
    fails(capsys, 4, feed_model, "--feeds", archive, mentions=["'x'", "7.3 TiB"])


def test_a_huge_random_shape(capsys, feed_model, runner):
    """The command line asked for it: a usage error, exit 2, in the same line from both runtimes."""
    args = [feed_model, "--random", "--shape", f"x={10 ** 13}"]
    line = fails(capsys, 2, *args, mentions=["--shape x: random value [10000000000000] float32 would take 36.4 TiB"])
    assert cc_fails(runner, 2, *args) == "graphrun-cc" + line.removeprefix("graphrun").rstrip("\n")


def test_a_ragged_feed_through_the_python_api(feed_model):
    """Found by the fuzzer: a ragged list escaped Session.run as numpy's ValueError."""
    graph = load(feed_model)
    with tf.Session(graph=graph) as sess, pytest.raises(TypeError, match=r"^Session.run: the value fed to 'x:0' "
                                                                         "is not a rectangular array"):
        sess.run("y:0", {"x:0": [[1.0, 2.0], [3.0]]})


def test_json_feeds_nested_too_deep_or_out_of_range(capsys, feed_model):
    fails(capsys, 2, feed_model, "--feed", "x=" + "[" * 5000 + "]" * 5000, mentions=["--feed x"])
    fails(capsys, 2, feed_model, "--feed", "x=[1e400]", mentions=["--feed x"])


def test_nan_and_empty_feeds_run(feed_model):
    graph = load(feed_model)
    with tf.Session(graph=graph) as sess:
        assert np.isnan(sess.run("y:0", {"x:0": np.array([np.nan], np.float32)})).all()
        assert sess.run("y:0", {"x:0": np.zeros(0, np.float32)}).shape == (0,)


def test_npy_check_reads_only_the_header():
    from graphdef.framework import npy_check
    buf = io.BytesIO(_npy_header("<i4", [3]) + np.arange(3, dtype="<i4").tobytes())
    assert npy_check.check(buf, len(buf.getvalue()), "a.npy")[0] == (3,)


def test_an_npy_header_that_is_not_a_literal(tmp_path, capsys, feed_model):
    """Found making the fuzzer's runs repeatable: Python's literal parser named the offending node by its
    address ("<ast.Call object at 0x7f..>"), so the same bad file gave a different message every run."""
    path = tmp_path / "x.npy"
    path.write_bytes(_npy_header(None, None, b"{'descr': print(), 'fortran_order': False, 'shape': (1,)}") + bytes(4))
    err = fails(capsys, 2, feed_model, "--feed", f"x=@{path}", mentions=["malformed .npy header"])
    assert " at 0x" not in err


def test_of_two_bad_attrs_the_first_by_name_is_named(tmp_path, capsys):
    """protobuf's map order differs from process to process; the message must not."""
    text = "\n".join([const("x", "DT_FLOAT", (1, 1, 1, 1), (1.0,), "float_val"),
                      const("w", "DT_FLOAT", (1, 1, 1, 1), (1.0,), "float_val"),
                      node("y", "Conv2D", ["x", "w"], T="type: DT_FLOAT", strides="i: 1", padding="i: 0",
                           data_format="i: 0", dilations="s: 'x'")])
    load_fails(tmp_path, capsys, text, "node 'y' (Conv2D): attr 'data_format' should hold a string but holds an int")
