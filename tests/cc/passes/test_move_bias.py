"""graphrun-cc's move_bias_before_reshape pass: a bias added after the Reshape of a matrix product (a frozen
Keras Dense on a 3-D input, Keras' attention projections) moves before the Reshape, where
fuse_conv_bias_activation takes it into the product's node, only where the answer cannot change.

Each element gets the same one float32 add either way, so the rewritten graph answers the unoptimized run's
bits exactly. Graphs are built with the generated protobuf classes as TensorFlow freezes them; two tests freeze
real Keras layers.
"""

import json

import numpy as np
import pytest

from graphdef._proto import graph_pb2
from tests.support.cc_helpers import Graph, bool_attr, fails, ok, run_cc, type_attr
from tests.support.numerics_policy import assert_conforms, assert_same
from tests.support.op_oracle import freeze_keras, tf_oracle  # noqa: F401 (tf_oracle: a fixture)

S, K, N, HEADS = 6, 40, 24, 4


def dense_graph(tmp_path, form="tensordot", bias="const", shape_tail=None, outside=None, swapped=False, seed=0, k=K,
                n=N):
    """x [?, S, K] through a product by a Const W and a Reshape, then a bias add ("out"):

    tensordot: MatMul(Reshape(x, [-1, K]), W) -> Reshape(ConcatV2(Gather(Shape(x), [0, 1]), tail)) -> BiasAdd
    const:     the same with the Reshape's shape a Const [-1, S] + tail, and AddV2 (`swapped`: bias first)
    attention: BatchMatMulV2(x, W) -> Reshape(Const [-1, S] + tail) -> AddV2 of a bias [HEADS, N / HEADS]

    `bias` "const", or "fed" (a Placeholder b); `shape_tail` replaces the Reshape's last dims; `outside` names
    a node that a Neg ("other") also reads."""
    rng = np.random.default_rng(seed)
    g = Graph()
    g.placeholder("x", np.float32)
    g.const("w", rng.standard_normal((k, n)).astype(np.float32))
    bias_shape = (HEADS, n // HEADS) if form == "attention" else (n,)
    tail = list(shape_tail or bias_shape)
    if bias == "const":
        g.const("b", rng.uniform(-2, 2, bias_shape).astype(np.float32))
    else:
        g.placeholder("b", np.float32)
    g.const("axis", np.int32(0), typed_field=True)
    if form == "attention":
        g.op("mm", "BatchMatMulV2", ["x", "w"], np.float32, adj_x=bool_attr(False), adj_y=bool_attr(False))
    else:
        g.const("flat", np.array([-1, k], np.int32))
        g.node("x2", "Reshape", ["x", "flat"], T=type_attr(np.float32), Tshape=type_attr(np.int32))
        g.op("mm", "MatMul", ["x2", "w"], np.float32, transpose_a=bool_attr(False), transpose_b=bool_attr(False))
    if form == "tensordot":
        g.node("shape", "Shape", ["x"], T=type_attr(np.float32), out_type=type_attr(np.int32))
        g.const("free", np.array([0, 1], np.int32))
        # TF writes a zero scalar as an empty TensorProto
        g.node("gather_axis", "Const", dtype=type_attr(np.int32), value=_empty_int32_scalar())
        g.node("gather", "GatherV2", ["shape", "free", "gather_axis"], Tparams=type_attr(np.int32),
               Tindices=type_attr(np.int32), Taxis=type_attr(np.int32))
        g.const("tail", np.array(tail, np.int32))
        g.node("target", "ConcatV2", ["gather", "tail", "axis"], T=type_attr(np.int32), Tidx=type_attr(np.int32),
               N=graph_pb2.AttrValue(i=2))
    else:
        g.const("target", np.array([-1, S] + tail, np.int32))
    g.node("reshape", "Reshape", ["mm", "target"], T=type_attr(np.float32), Tshape=type_attr(np.int32))
    if form == "tensordot":
        g.op("out", "BiasAdd", ["reshape", "b"], np.float32)
    else:
        g.op("out", "AddV2", ["b", "reshape"] if swapped else ["reshape", "b"], np.float32)
    if outside:
        g.op("other", "Neg", [outside], np.float32)
    return g.save(tmp_path / "model.pb")


def _empty_int32_scalar():
    proto = graph_pb2.TensorProto(dtype=graph_pb2.DataType.DT_INT32)
    proto.tensor_shape.SetInParent()
    return graph_pb2.AttrValue(tensor=proto)


def feeds(tmp_path, seed=1, rows=3, bias_shape=None, k=K):
    rng = np.random.default_rng(seed)
    np.save(tmp_path / "x.npy", rng.standard_normal((rows, S, k)).astype(np.float32))
    args = ["--feed", f"x=@{tmp_path / 'x.npy'}"]
    if bias_shape:
        np.save(tmp_path / "b.npy", rng.uniform(-2, 2, bias_shape).astype(np.float32))
        args += ["--feed", f"b=@{tmp_path / 'b.npy'}"]
    return args


def run(runner, model, feed_args, *fetches, optimize=True):
    args = [model, *feed_args, "--json"] + [a for f in fetches for a in ("--fetch", f)]
    docs = json.loads(ok(runner, *args, *([] if optimize else ["--no-optimize"])))["outputs"]
    return [np.array(d["values"], dtype=d["dtype"]).reshape(d["shape"]) for d in docs]


def profile(runner, model, feed_args, *fetches):
    """(what move_bias_before_reshape reported, the op types that ran), from bench --profile --json."""
    doc = json.loads(ok(runner, "bench", model, *feed_args, "--runs", "1", "--warmup", "0", "--profile", "--json",
                        *[a for f in fetches for a in ("--fetch", f)]))
    counts = {p["pass"]: p["counts"] for p in doc["optimize"]["passes"]}.get("move_bias_before_reshape", {})
    return counts, {t["op"] for t in doc["profile"]["op_types"]}


def assert_unchanged_bits(runner, model, feed_args, *fetches):
    for moved, plain in zip(run(runner, model, feed_args, *fetches),
                            run(runner, model, feed_args, *fetches, optimize=False)):
        assert_same(moved, plain)


@pytest.mark.parametrize("form, swapped, fused", [("tensordot", False, "_FusedMatMul"),
                                                  ("const", False, "_FusedMatMul"),
                                                  ("const", True, "_FusedMatMul"),
                                                  ("attention", False, "_FusedBatchMatMulV2")])
def test_the_bias_moves_into_the_product(runner, tmp_path, form, swapped, fused):
    model = dense_graph(tmp_path, form, swapped=swapped)
    args = feeds(tmp_path)
    counts, ops = profile(runner, model, args, "out")
    assert counts == {"biases moved before reshapes": 1}
    assert fused in ops and not ops & {"BiasAdd", "AddV2", "MatMul", "BatchMatMulV2"}, ops
    assert_unchanged_bits(runner, model, args, "out")
    (got,) = run(runner, model, args, "out")
    assert got.shape == ((3, S, HEADS, N // HEADS) if form == "attention" else (3, S, N))


def test_the_hand_written_kernels_agree_bit_for_bit(runner, tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHRUN_CC_NO_DNNL", "1")
    for form in ("tensordot", "attention"):
        model = dense_graph(tmp_path, form)
        args = feeds(tmp_path, seed=2)
        assert profile(runner, model, args, "out")[0] != {}
        assert_unchanged_bits(runner, model, args, "out")


@pytest.mark.slow
def test_a_large_product_agrees_bit_for_bit(runner, tmp_path):
    # a Transformer's sizes: oneDNN blocks the product, and the bias is still added once, after the sums
    for form in ("tensordot", "attention"):
        model = dense_graph(tmp_path, form, seed=3, k=512, n=2048)
        args = feeds(tmp_path, seed=3, rows=40, k=512)
        assert profile(runner, model, args, "out")[0] != {}
        assert_unchanged_bits(runner, model, args, "out")


def test_inspect_says_the_pass_ran(runner, tmp_path):
    last = ok(runner, "inspect", dense_graph(tmp_path, "attention")).splitlines()[-1]
    assert last.startswith("optimize:") and "move_bias_before_reshape: 1 biases moved before reshapes" in last, last


@pytest.mark.parametrize("form", ["tensordot", "const", "attention"])
def test_a_bias_that_is_not_a_const_stays(runner, tmp_path, form):
    model = dense_graph(tmp_path, form, bias="fed")
    args = feeds(tmp_path, bias_shape=(HEADS, N // HEADS) if form == "attention" else (N,))
    assert profile(runner, model, args, "out")[0] == {}
    assert_unchanged_bits(runner, model, args, "out")


@pytest.mark.parametrize("form, tail", [("tensordot", [2, N // 2]), ("const", [2, N // 2]),
                                        ("attention", [N // HEADS])])
def test_a_reshape_of_the_last_dim_keeps_the_graph(runner, tmp_path, form, tail):
    # the bias then meets other elements after the Reshape than before it; here it is built to fit the new last
    # dims, so the unoptimized graph runs
    model = dense_graph(tmp_path, form, shape_tail=tail)
    graph = Graph()
    graph.proto.ParseFromString(model.read_bytes())
    b = next(n for n in graph.proto.node if n.name == "b")
    graph.proto.node.remove(b)
    graph.const("b", np.linspace(-1, 1, tail[-1]).astype(np.float32))
    model = graph.save(tmp_path / "reshaped.pb")
    args = feeds(tmp_path)
    assert profile(runner, model, args, "out")[0] == {}
    assert_unchanged_bits(runner, model, args, "out")


@pytest.mark.parametrize("outside", ["mm", "reshape"])
def test_an_intermediate_with_another_reader_keeps_the_graph(runner, tmp_path, outside):
    model = dense_graph(tmp_path, "tensordot", outside=outside)
    args = feeds(tmp_path)
    assert profile(runner, model, args, "out", "other")[0] == {}
    assert_unchanged_bits(runner, model, args, "out", "other")


@pytest.mark.parametrize("fetched", ["mm", "reshape"])
def test_a_fetched_intermediate_keeps_the_graph(runner, tmp_path, fetched):
    model = dense_graph(tmp_path, "attention")
    args = feeds(tmp_path)
    assert profile(runner, model, args, "out", fetched)[0] == {}
    assert_unchanged_bits(runner, model, args, "out", fetched)
    assert profile(runner, model, args, "out")[0] != {}


def test_a_bias_add_that_would_refuse_a_vector_stays(runner, tmp_path):
    # BiasAdd needs a value of 2 or more dims: after a Reshape to [N] (one row) it fails, and must still fail
    model = dense_graph(tmp_path, "tensordot")
    graph = Graph()
    graph.proto.ParseFromString(model.read_bytes())
    graph.const("none", np.zeros(0, np.int32))
    next(n for n in graph.proto.node if n.name == "target").input[0] = "none"
    model = graph.save(tmp_path / "vector.pb")
    assert "move_bias_before_reshape" not in ok(runner, "inspect", model).splitlines()[-1]
    np.save(tmp_path / "x.npy", np.ones((1, 1, K), np.float32))
    args = [model, "--feed", f"x=@{tmp_path / 'x.npy'}"]
    moved, plain = run_cc(runner, *args), run_cc(runner, *args, "--no-optimize")
    assert moved[0] != 0 and moved == plain and "BiasAdd" in moved[2], moved


@pytest.mark.parametrize("no_dnnl", [None, "1"])
def test_a_batch_matmul_by_a_matrix_fuses_its_bias_and_activation(runner, tmp_path, monkeypatch, no_dnnl):
    # Keras' attention output projection: BatchMatMulV2 of a sequence by a 2-D W, then BiasAdd (here a Relu too)
    if no_dnnl:
        monkeypatch.setenv("GRAPHRUN_CC_NO_DNNL", no_dnnl)
    rng = np.random.default_rng(5)
    g = Graph()
    g.placeholder("x", np.float32)
    g.const("w", rng.standard_normal((K, N)).astype(np.float32))
    g.const("b", rng.uniform(-2, 2, N).astype(np.float32))
    g.op("mm", "BatchMatMulV2", ["x", "w"], np.float32, adj_x=bool_attr(False), adj_y=bool_attr(False))
    g.op("bias", "BiasAdd", ["mm", "b"], np.float32)
    g.op("out", "Relu", ["bias"], np.float32)
    model = g.save(tmp_path / "model.pb")
    args = feeds(tmp_path, seed=6)
    assert profile(runner, model, args, "out")[1] == {"_FusedBatchMatMulV2"}
    assert_unchanged_bits(runner, model, args, "out")


def test_the_fused_batch_matmul_is_not_a_model_op(runner, tmp_path):
    g = Graph()
    g.placeholder("x", np.float32)
    g.const("c", np.ones((2, 2), np.float32))
    g.node("z", "_FusedBatchMatMulV2", ["x", "c", "c"], T=type_attr(np.float32))
    line = fails(runner, 3, g.save(tmp_path / "m.pb"), "--feed", "x=[[1,2],[3,4]]")
    assert "_FusedBatchMatMulV2" in line


@pytest.mark.tf_oracle
@pytest.mark.parametrize("layer", ["Dense", "EinsumDense"])
def test_a_frozen_keras_layer_on_a_sequence(runner, tf_oracle, tmp_path, layer):
    keras = pytest.importorskip("keras", reason="keras is not installed; `make test` installs it")
    inputs = keras.Input((S, K))
    if layer == "Dense":
        dense = keras.layers.Dense(N, activation="relu")
    else:  # a multi-head attention's query projection
        dense = keras.layers.EinsumDense("abc,cde->abde", output_shape=(None, HEADS, N // HEADS), bias_axes="de")
    model = keras.Model(inputs, dense(inputs))
    rng = np.random.default_rng(4)
    dense.set_weights([rng.uniform(-1, 1, w.shape).astype(np.float32) for w in dense.get_weights()])
    path = tmp_path / "keras.pb"
    x_name, fetch, graph_def = freeze_keras(tf_oracle, model, (None, S, K), path)
    x = rng.standard_normal((5, S, K)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    args = ["--feed", f"{x_name}=@{tmp_path / 'x.npy'}"]
    counts, ops = profile(runner, path, args, fetch)
    assert counts == {"biases moved before reshapes": 1}, counts
    assert ops & {"_FusedMatMul", "_FusedBatchMatMulV2"} and not ops & {"BiasAdd", "AddV2"}, ops
    (got,) = run(runner, path, args, fetch)
    (plain,) = run(runner, path, args, fetch, optimize=False)
    assert_same(got, plain)
    assert_conforms(got, np.asarray(model(x)), graph_def, fetch)
