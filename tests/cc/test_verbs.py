"""graphrun-cc's run, inspect and bench verbs against graphrun's (graphdef.graphrun.cli.main in-process).

Wherever the output is deterministic (random feeds, --out files and their lines, inspect,
errors and exit codes) the two must agree byte for byte; for bench, where the figures are
timings, the layout and the JSON keys must agree and both must parse.
"""

import json
import re

import numpy as np
import pytest

import graphdef as tf
from graphdef._proto import graph_pb2
from graphdef.ops.cc_pending import cc_pending
from tests.support.cc_helpers import REPO, run_cc
from tests.support.graphrun_helpers import CNN, MLP, graphrun, save_model

COMMITTED_MODELS = sorted([*(REPO / "tests" / "models").glob("*.pb"),
                           *(REPO / "tests" / "tf_models").glob("*/model.pb"),
                           *(REPO / "tests" / "conformance" / "cases").glob("*/model.pb")])


def without_optimize(stdout):
    """A report without its account of the load-time graph passes (inspect's and bench --profile's
    "optimize:" line, their JSON's last key "optimize"): each runtime has its own passes."""
    stdout = re.sub(r'(?m)^optimize: .*\n', "", stdout)
    return re.sub(r', "optimize": \{"enabled".*?\]\}\}\n$', "}\n", stdout)


def both(capsys, runner, *argv):
    """(code, stdout, stderr without the program's prefix) from each runner."""
    py = graphrun(capsys, *argv)
    c = run_cc(runner, *argv)
    return ((py[0], without_optimize(py[1]), py[2].removeprefix("graphrun: ")),
            (c[0], without_optimize(c[1]), c[2].removeprefix("graphrun-cc: ")))


def same(capsys, runner, *argv, code=0):
    """Both runners exit `code` with the same stdout and the same one-line error; returns stdout."""
    py, c = both(capsys, runner, *argv)
    assert py == c
    assert py[0] == code, py
    return py[1]


# -- run --random / --seed / --shape --------------------------------------------------------

DTYPES = [tf.float32, tf.float64, tf.int8, tf.int16, tf.int32, tf.int64, tf.uint8, tf.uint16,
          tf.uint32, tf.uint64, tf.bool]


def build_every_dtype():
    for i, dtype in enumerate(DTYPES):
        tf.placeholder(dtype, [3, 4] if i % 2 else [None, 5], name=f"p{i}/{dtype.name}")
    unknown = tf.placeholder(tf.float32, None, name="unknown_rank")
    tf.identity(unknown, name="unknown_out")
    tf.placeholder_with_default(tf.constant([1.0, 2.0]), [2], name="defaulted")


@pytest.fixture
def every_dtype(tmp_path):
    return save_model(tmp_path / "dtypes.pb", build_every_dtype)


def fetch_all(*extra):
    args = []
    for i, dtype in enumerate(DTYPES):
        args += ["--fetch", f"p{i}/{dtype.name}"]
        if not i % 2:
            args += ["--shape", f"p{i}/{dtype.name}=2,5"]
    return args + list(extra)


@pytest.mark.parametrize("seed", ["0", "1", "18446744073709551615", " 4_2 "])
def test_random_values_are_graphruns_bit_for_bit(capsys, runner, every_dtype, seed):
    out = same(capsys, runner, every_dtype, "--random", "--seed", seed, *fetch_all("--json"))
    assert len(json.loads(out)["outputs"]) == len(DTYPES)
    same(capsys, runner, every_dtype, "--random", "--seed", seed, *fetch_all())


def test_random_feeds_only_what_is_needed(capsys, runner, every_dtype):
    # The unknown-rank placeholder is not needed for these fetches, so it needs no --shape;
    # a PlaceholderWithDefault is never given random values.
    same(capsys, runner, every_dtype, "--random", "--fetch", "p1/float64", "--fetch", "defaulted")
    # Fed placeholders keep their values; the others are random.
    same(capsys, runner, every_dtype, "--random", "--fetch", "p1/float64", "--fetch", "p3/int16",
         "--feed", "p3/int16=[[1,2,3,4],[5,6,7,8],[9,10,11,12]]")


def test_random_on_the_test_models(capsys, runner):
    same(capsys, runner, MLP, "--random", "--shape", "x=3,16", "--seed", "9")
    same(capsys, runner, MLP, "--random", "--shape", "x:0=3,16", "--fetch", "x", "--json")
    same(capsys, runner, CNN, "--random", "--shape", "x=2,8,8,1", "--fetch", "x")


@pytest.mark.parametrize("args, message", [
    ([], "placeholder not fed: x (float32, [?,16]); use --feed NAME=VALUE, --feeds FILE.npz or --random"),
    (["--random"], "--random: placeholder x (float32, [?,16]) has an unknown dimension; "
                   "give its shape with --shape x=N,16"),
    (["--shape", "x=2,16"], "--shape sets the shape of --random values; add --random"),
    (["--random", "--shape", "x=2,15"],
     "--shape x: shape [2,15] does not fit placeholder 'x' (float32), whose shape is [?,16]"),
    (["--random", "--shape", "x=2"], "--shape x: shape [2] does not fit placeholder 'x' (float32), "
                                     "whose shape is [?,16]"),
    (["--random", "--shape", "x=2,a"], "--shape x: '2,a' is not a list of sizes such as 8,784"),
    (["--random", "--shape", "x=-2,16"], "--shape x: '-2,16' is not a list of sizes such as 8,784"),
    (["--random", "--shape", "x"], "--shape expects NAME=D,D,... (e.g. x=8,784), got 'x'"),
    (["--random", "--shape", "=2"], "--shape expects NAME=D,D,... (e.g. x=8,784), got '=2'"),
    (["--random", "--shape", "x=2,16", "--shape", "x:0=3,16"], "--shape x:0: placeholder 'x' is given twice"),
    (["--random", "--shape", "nope=2"], "cannot feed 'nope': the graph has no node 'nope'; "
                                        "the graph's placeholders: x (float32, [?,16])"),
    (["--random", "--shape", "x:1=2,16"], "cannot feed 'x:1': a placeholder has only output 0; "
                                          "the graph's placeholders: x (float32, [?,16])"),
    (["--random", "--shape", "output/score=2"], "cannot feed 'output/score': 'output/score' is a Sigmoid node, "
                                                "not a placeholder; the graph's placeholders: x (float32, [?,16])"),
    (["--random", "--shape", "x=1,16", "--feed", "x=[[" + ",".join(["1"] * 16) + "]]"],
     "--shape x: the placeholder is fed by --feed; --shape applies to --random values only"),
])
def test_random_and_shape_errors(capsys, runner, args, message):
    py, c = both(capsys, runner, MLP, *args)
    assert py == c == (2, "", message + "\n")


def test_unknown_rank_hint_and_npz_source(capsys, runner, every_dtype, tmp_path):
    py, c = both(capsys, runner, every_dtype, "--random", "--fetch", "unknown_out")
    assert py == c
    assert py[2].endswith("has an unknown rank; give its shape with --shape unknown_rank=D,D,...\n")
    np.savez(tmp_path / "f.npz", **{"p1/float64": np.zeros((3, 4))})
    py, c = both(capsys, runner, every_dtype, "--random", "--feeds", tmp_path / "f.npz", "--shape", "p1/float64=3,4",
                 "--fetch", "p1/float64")
    assert py == c
    assert py[2] == f"--shape p1/float64: the placeholder is fed by --feeds {tmp_path / 'f.npz'}; " \
                    "--shape applies to --random values only\n"


def test_random_refuses_a_variant_placeholder(capsys, runner, tmp_path):
    # A variant (a TensorList handle) has no elements to draw; found by the Python fuzzer.
    graph = graph_pb2.GraphDef()
    handle = graph.node.add(name="h", op="Placeholder")
    handle.attr["dtype"].type = graph_pb2.DT_VARIANT
    handle.attr["shape"].shape.SetInParent()
    graph.node.add(name="length", op="TensorListLength", input=["h"])
    path = tmp_path / "variant.pb"
    path.write_bytes(graph.SerializeToString())
    py, c = both(capsys, runner, path, "--random", "--fetch", "length")
    assert py == c == (2, "", "--random: placeholder h (variant, []): random values are made for float, integer "
                              "and bool placeholders only; fetch a tensor that does not need this one\n")


def test_bad_seeds_exit_2(capsys, runner):
    for seed in ["-1", "18446744073709551616", "1.5", "x"]:
        py, c = both(capsys, runner, MLP, "--random", "--shape", "x=1,16", "--seed", seed)
        assert py[:2] == c[:2] == (2, ""), (seed, py, c)


# -- run --out ------------------------------------------------------------------------------

def build_odd_names():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    with tf.name_scope("layer"):
        tf.nn.relu(x, name="Relu")
    tf.cast(x > 0, tf.int32, name="pos")
    tf.greater(x, 0.5, name="big")
    tf.reduce_sum(tf.cast(x, tf.float64), name="total")
    tf.identity(tf.constant(7, tf.int64), name="seven")
    tf.constant(np.arange(12, dtype=np.uint8).reshape(3, 4), name="u8")


@pytest.fixture
def odd(tmp_path):
    return save_model(tmp_path / "odd.pb", build_odd_names)


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_out_writes_the_same_lines_and_npy_bytes(capsys, runner, odd, tmp_path, json_flag):
    py_dir, cc_dir = tmp_path / "py" / "deep", tmp_path / "cc" / "deep"
    py = graphrun(capsys, odd, "--random", "--seed", "3", "--out", py_dir, *json_flag)
    c = run_cc(runner, odd, "--random", "--seed", "3", "--out", cc_dir, *json_flag)
    assert py[0] == c[0] == 0 and py[2] == c[2] == ""
    assert py[1].replace(str(py_dir), "DIR") == c[1].replace(str(cc_dir), "DIR")
    names = sorted(p.name for p in py_dir.iterdir())
    assert names == sorted(p.name for p in cc_dir.iterdir())
    assert "layer_Relu_0.npy" in names and len(names) == 6
    for name in names:
        assert (py_dir / name).read_bytes() == (cc_dir / name).read_bytes(), name


def test_out_with_a_trailing_slash_and_the_mlp(capsys, runner, tmp_path):
    same_dir = str(tmp_path / "o") + "/"
    out = same(capsys, runner, MLP, "--random", "--shape", "x=4,16", "--out", same_dir, "--fetch", "x",
               "--fetch", "output/score:0", "--fetch", "x:0")
    assert out.splitlines()[0] == f"x:0 float32 [4,16] -> {same_dir}x_0.npy"


def test_out_errors(capsys, runner, odd, tmp_path):
    py, c = both(capsys, runner, odd, "--random", "--out", tmp_path / "o", "--fetch", "layer/Relu",
                 "--fetch", "layer_Relu")
    assert py[0] == 2 and py[1] == ""  # no such node: the fetch is refused first, by both
    assert c[:2] == py[:2]
    (tmp_path / "file").write_text("")
    py, c = both(capsys, runner, odd, "--random", "--out", tmp_path / "file", "--fetch", "pos")
    assert py == c
    assert py[2] == f"--out {tmp_path / 'file'}: cannot create the directory (File exists)\n"


def test_out_collision(capsys, runner, tmp_path):
    model = tmp_path / "clash.pbtxt"
    model.write_text("""
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: 2 } } } } }
node { name: "a/b" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "a>b" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
""")
    py, c = both(capsys, runner, model, "--random", "--out", tmp_path / "o")
    assert py == c == (2, "", "--out: 'a/b:0' and 'a>b:0' would both be written to a_b_0.npy\n")
    assert not (tmp_path / "o").exists()


# -- inspect --------------------------------------------------------------------------------

# Models whose inspect output graphrun-cc does not yet print byte for byte: each has an
# output whose shape needs an op graphrun-cc's shape inference does not cover yet (Conv2D,
# StridedSlice, BroadcastGradientArgs, ...: it prints <unknown> where graphrun knows),
# or an op graphrun has a kernel for and graphrun-cc has not (listed as unsupported, as it is
# for graphrun-cc). Everything else about them must still agree (see below).
INSPECT_GAPS = set("""
conformance/cases/broadcast_gradient_args conformance/cases/broadcast_gradient_args_both_one
conformance/cases/broadcast_gradient_args_int64_and_empty
conformance/cases/conv2d_backprop_filter conformance/cases/conv2d_backprop_input
conformance/cases/conv2d_explicit_padding conformance/cases/conv2d_float64_1x1
conformance/cases/conv2d_same_stride2 conformance/cases/conv2d_valid_dilated_rect
conformance/cases/depthwise_conv2d
conformance/cases/fused_batch_norm_inference
conformance/cases/fused_batch_norm_training
conformance/cases/range
conformance/cases/strided_slice conformance/cases/strided_slice_grad
conformance/cases/strided_slice_masks
tf_models/gradients
tf_models/keras_cnn tf_models/keras_sequence tf_models/zoo
tf_models/tf2_control_flow tf_models/tf2_noinline_calls
""".split())
# graphrun-cc has no static shape rules yet for the ops added for TF/Keras graphs (BatchMatMul, Einsum,
# resizing, NMS, space/batch moves, FusedBatchNorm V1/V2, grouped Conv2D): it prints <unknown> there
INSPECT_GAPS |= set("""
conformance/cases/batch_matmul_v1 conformance/cases/batch_matmul_v1_adjoints
conformance/cases/batch_matmul_v2_adj_y_rank2 conformance/cases/batch_matmul_v2_broadcast
conformance/cases/batch_matmul_v2_empty_batch conformance/cases/batch_matmul_v2_float64_adj_x
conformance/cases/batch_matmul_v2_int32 conformance/cases/batch_matmul_v3
conformance/cases/batch_to_space_nd_crops conformance/cases/conv2d_grouped conformance/cases/einsum_abc_cd
conformance/cases/einsum_attention_scores conformance/cases/einsum_attention_values
conformance/cases/einsum_dense_in conformance/cases/einsum_dense_out conformance/cases/einsum_implicit
conformance/cases/einsum_int64 conformance/cases/einsum_outer conformance/cases/einsum_sum
conformance/cases/einsum_summed_alone conformance/cases/einsum_transpose
conformance/cases/fused_batch_norm_v1_inference conformance/cases/fused_batch_norm_v1_v2_training
conformance/cases/non_max_suppression_empty conformance/cases/non_max_suppression_v3
conformance/cases/non_max_suppression_v4_padded conformance/cases/non_max_suppression_v5_hard
conformance/cases/resize_align_corners conformance/cases/resize_half_pixel conformance/cases/resize_legacy
conformance/cases/resize_uint8_to_one_pixel conformance/cases/space_to_batch_nd_1d_int32
conformance/cases/space_to_batch_nd_2d conformance/cases/space_to_batch_nd_empty
conformance/cases/space_to_depth_depth_to_space
conformance/cases/cond_false conformance/cases/cond_true
conformance/cases/tensor_list_loop conformance/cases/tensor_list_push_pop
conformance/cases/gather_nd
conformance/cases/scatter_nd
conformance/cases/where_coordinates
conformance/cases/conv2d_grouped_backprops conformance/cases/resize_grads_align_corners
conformance/cases/resize_grads_half_pixel conformance/cases/resize_grads_legacy
""".split())

# nor for TF's fused convolutions (_FusedConv2D, _FusedDepthwiseConv2dNative), as for the plain ones above
INSPECT_GAPS |= set("""
conformance/cases/depthwise_wide_channels conformance/cases/fused_conv2d_bias_relu
conformance/cases/fused_conv2d_explicit_leaky_relu conformance/cases/fused_conv2d_relu6_elu
conformance/cases/fused_depthwise_bias_relu6
""".split())

# nor for StridedSlice (reverse_sequence reverses a slice of its input)
INSPECT_GAPS |= {"conformance/cases/reverse_sequence"}


def model_id(path):
    return str(path.relative_to(REPO / "tests")).removesuffix("/model.pb")


def _holds_pending_ops(path):
    """A model with an op graphrun-cc has no kernel for yet (graphdef.ops.cc_pending): a gap too."""
    graph_def = graph_pb2.GraphDef.FromString(path.read_bytes())
    return any(node.op in PENDING for node in graph_def.node)


PENDING = cc_pending()
PENDING_GAPS = {model_id(path) for path in COMMITTED_MODELS if _holds_pending_ops(path)}
INSPECT_GAPS |= PENDING_GAPS


@pytest.mark.slow
@pytest.mark.parametrize("model", COMMITTED_MODELS, ids=model_id)
def test_inspect_matches_graphrun(capsys, runner, model, monkeypatch):
    model = model.relative_to(REPO)  # the path is printed: give both the same one
    # graphrun's "optimized at load" line describes its own passes, not graphrun-cc's: compared without it
    monkeypatch.setenv("GRAPHDEF_OPTIMIZE", "0")
    text_py, text_cc = both(capsys, runner, "inspect", model)
    json_py, json_cc = both(capsys, runner, "inspect", model, "--json")
    assert text_py[0] == json_py[0] == text_cc[0] == json_cc[0] == 0
    if model_id(REPO / model) not in INSPECT_GAPS:
        assert text_cc == text_py
        assert json_cc == json_py
        return
    # A gap: graphrun-cc may know less about an output's shape, and may lack kernels
    # graphrun has, but never says anything different from graphrun.
    py, c = json.loads(json_py[1]), json.loads(json_cc[1])
    py_unsupported, cc_unsupported = py.pop("unsupported_ops"), c.pop("unsupported_ops")
    assert {u["op"] for u in py_unsupported} <= {u["op"] for u in cc_unsupported}
    py_outputs, cc_outputs = py.pop("outputs"), c.pop("outputs")
    py.pop("load_error"), c.pop("load_error")
    assert c == py
    if model_id(REPO / model) in PENDING_GAPS:
        # graphrun-cc takes a node of an op it has no kernel for to have one output: it lists the
        # first of each such node's outputs (even of an op that has none, such as InitializeTableV2)
        # and those of the ops it knows
        graph_def = graph_pb2.GraphDef.FromString((REPO / model).read_bytes())
        guessed = {node.name for node in graph_def.node if node.op in PENDING}
        assert {o["name"] for o in cc_outputs if o["name"].split(":")[0] not in guessed} <= \
            {o["name"] for o in py_outputs}
        return
    assert [o["name"] for o in cc_outputs] == [o["name"] for o in py_outputs]
    for o_py, o_cc in zip(py_outputs, cc_outputs):
        assert o_cc["dtype"] in (None, o_py["dtype"])
        assert o_cc["shape"] is None or o_py["shape"] is not None and len(o_cc["shape"]) == len(o_py["shape"])


def test_inspect_errors(capsys, runner, tmp_path):
    (tmp_path / "junk.pb").write_bytes(b"\xff\xff not a graph")
    for argv in [["inspect", tmp_path / "missing.pb"], ["inspect", tmp_path / "junk.pb"]]:
        py, c = both(capsys, runner, *argv)
        assert py[:2] == c[:2] == (3, "")
    py, c = both(capsys, runner, "inspect", MLP, "--random")
    assert py[:2] == c[:2] == (2, "")


# -- bench ----------------------------------------------------------------------------------

def layout(text):
    """A bench report with its timings (and the rows they order) taken out."""
    lines = [re.sub(r"\d+ timed runs|profile: \d+ runs", "N runs", re.sub(r"\d+\.\d+", "T", line))
             for line in text.splitlines()]
    # Column widths follow the names of whichever nodes were slowest this time.
    return [re.sub(r"  +", "  ", line) for line in lines
            if not line.startswith("  ") or "op type" in line or line.startswith("  node ")]


def keys(value):
    if isinstance(value, dict):
        return {k: keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [keys(value[0])] if value else []
    return type(value).__name__


@pytest.mark.slow
@pytest.mark.parametrize("extra", [[], ["--profile", "--top", "2"], ["--warmup", "0", "--duration", "0.05"]])
def test_bench_has_graphruns_layout(capsys, runner, extra):
    argv = ["bench", MLP, "--random", "--shape", "x=8,16", "--runs", "20", *extra]
    if "--duration" in extra:
        argv.remove("--runs"), argv.remove("20")
    py, c = both(capsys, runner, *argv)
    assert py[0] == c[0] == 0 and py[2] == c[2] == ""
    assert layout(c[1]) == layout(py[1])
    if "--profile" in extra:  # the same nodes are profiled: the same op types with the same counts
        def table(text):
            return sorted(re.findall(r"^  (\w+)\s+(\d+)\s+\d+\.\d+\s", text, re.M))
        assert table(c[1]) == table(py[1])
        assert c[1].count("\n") == py[1].count("\n")
    py_json, c_json = both(capsys, runner, *argv, "--json")
    py_doc, c_doc = json.loads(py_json[1]), json.loads(c_json[1])
    assert py_doc.pop("engine") in ("python", "cc")  # which Session engine ran: graphrun-cc has one
    assert keys(c_doc) == keys(py_doc)
    assert list(c_doc) == list(py_doc)
    assert c_doc["runs"] == py_doc["runs"] or "--duration" in extra
    lat = c_doc["latency_seconds"]
    assert lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"]


def test_bench_errors(capsys, runner):
    for argv in [["bench", MLP, "--runs", "1", "--duration", "1", "--random", "--shape", "x=1,16"],
                 ["bench", MLP, "--runs", "0"], ["bench", MLP, "--top", "x"], ["bench", MLP, "--runs", "2"],
                 ["bench", MLP, "--out", "o"]]:
        py, c = both(capsys, runner, *argv)
        assert py[:2] == c[:2] == (2, ""), argv
    py, c = both(capsys, runner, "bench", MLP, "--runs", "2")
    assert py == c  # the missing feed, in graphrun's words


@pytest.mark.parametrize("form", ["empty", "typed", "content"])
def test_shape_inference_reads_a_const_as_tensorflow_does(runner, tmp_path, form):
    # TensorFlow writes a zero scalar (GatherV2's axis) as a TensorProto with no values; those are
    # zeros. With values in both fields, tensor_content wins: int_val says 1 here, the content 0.
    from tests.support.cc_helpers import Graph, type_attr
    g = Graph()
    g.placeholder("x", np.float32, shape=[2, 3])
    g.const("axis", np.array(0, np.int32))
    g.op("e", "ExpandDims", ["x", "axis"], np.float32, Tdim=type_attr(np.int32))
    path = g.save(tmp_path / "model.pb")
    graph = graph_pb2.GraphDef()
    graph.ParseFromString(path.read_bytes())
    value = next(n for n in graph.node if n.name == "axis").attr["value"].tensor
    value.ClearField("int_val")
    value.ClearField("tensor_content")
    if form == "typed":
        value.int_val.append(0)
    elif form == "content":
        value.int_val.append(1)
        value.tensor_content = np.array(0, np.int32).tobytes()
    path.write_bytes(graph.SerializeToString())
    code, stdout, stderr = run_cc(runner, "inspect", str(path), "--json", "--no-optimize")
    assert code == 0, stderr
    assert json.loads(stdout)["outputs"] == [{"name": "e:0", "dtype": "float32", "shape": [1, 2, 3]}]
