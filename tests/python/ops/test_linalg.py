"""BatchMatMul (V1-V3), Einsum and FusedBatchNorm V1/V2 against TensorFlow, their declarations
against TF's OpDefs, and hostile equations and shapes refused in one line by both runtimes."""

import numpy as np
import pytest

import graphdef as tf
from graphdef.ops import REGISTRY
from tests.support import cc_helpers as cc
from tests.support.op_oracle import gradients_both, run_both, tf_oracle  # noqa: F401 - a fixture
from tests.python.ops.test_opdefs import test_declaration_matches_tensorflow as _matches_tensorflow

NEW_OPS = ["BatchMatMul", "BatchMatMulV2", "BatchMatMulV3", "Einsum", "FusedBatchNorm", "FusedBatchNormV2"]


def _values(shape, seed, dtype=np.float32):
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("op_type", NEW_OPS)
def test_declaration_matches_tensorflow(tf_oracle, op_type):
    _matches_tensorflow(tf_oracle, op_type)


BMM = [  # op, x shape, y shape, adj_x, adj_y
    ("BatchMatMul", (2, 3, 4), (2, 4, 5), False, False),
    ("BatchMatMul", (3, 2, 4, 3), (3, 2, 5, 4), True, True),
    ("BatchMatMulV2", (2, 1, 3, 4), (5, 4, 2), False, False),
    ("BatchMatMulV2", (1, 7, 3), (4, 9, 7), True, True),
    ("BatchMatMulV2", (4, 3), (2, 3, 6), False, False),
    ("BatchMatMulV2", (0, 3, 4), (1, 4, 5), False, False),
    ("BatchMatMulV2", (2, 3, 0), (2, 0, 5), False, False),
    ("BatchMatMulV2", (2, 3, 17), (1, 33, 17), False, True),
]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("op, xs, ys, adj_x, adj_y", BMM)
def test_batch_matmul_matches_tensorflow(tf_oracle, op, xs, ys, adj_x, adj_y):
    x, y = _values(xs, 1), _values(ys, 2)
    run_both(tf_oracle, lambda: [tf.raw_op(op, tf.placeholder(tf.float32, xs, name="x"),
                                           tf.placeholder(tf.float32, ys, name="y"), adj_x=adj_x, adj_y=adj_y)],
             {"x": x, "y": y})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_batch_matmul_v3_and_dtypes(tf_oracle, dtype):
    x, y = (_values((2, 3, 4), 3) * 4).astype(dtype), (_values((1, 4, 2), 4) * 4).astype(dtype)
    t = tf.as_dtype(dtype)
    run_both(tf_oracle, lambda: [
        tf.raw_op("BatchMatMulV3", tf.placeholder(t, x.shape, name="x"), tf.placeholder(t, y.shape, name="y"),
                  Ta=t, Tb=t, Tout=t),
        tf.raw_op("BatchMatMulV2", tf.placeholder(t, x.shape, name="x2"), tf.placeholder(t, y.shape, name="y2"))],
        {"x": x, "y": y, "x2": x, "y2": y})


@pytest.mark.tf_oracle
def test_batch_matmul_v2_float16_and_v3_int8_to_int32(tf_oracle):
    x, y = (_values((2, 3, 4), 3) * 4).astype(np.float16), (_values((1, 4, 2), 4) * 4).astype(np.float16)
    a, b = (_values((2, 3, 4), 5) * 20).astype(np.int8), (_values((4, 2), 6) * 20).astype(np.int8)
    run_both(tf_oracle, lambda: [
        tf.raw_op("BatchMatMulV2", tf.placeholder(tf.float16, x.shape, name="x"),
                  tf.placeholder(tf.float16, y.shape, name="y")),
        tf.raw_op("BatchMatMulV3", tf.placeholder(tf.int8, a.shape, name="a"),
                  tf.placeholder(tf.int8, b.shape, name="b"), Ta=tf.int8, Tb=tf.int8, Tout=tf.int32)],
        {"x": x, "y": y, "a": a, "b": b})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("op, xs, ys, adj_x, adj_y", [b for b in BMM if 0 not in b[1] + b[2]])
def test_batch_matmul_gradients_match_tensorflow(tf_oracle, op, xs, ys, adj_x, adj_y):
    def make():
        x, y = tf.placeholder(tf.float32, xs, name="x"), tf.placeholder(tf.float32, ys, name="y")
        z = tf.raw_op(op, x, y, adj_x=adj_x, adj_y=adj_y)
        return tf.reduce_sum(z * z), [x, y]
    gradients_both(tf_oracle, make, {"x": _values(xs, 5), "y": _values(ys, 6)})


@pytest.mark.tf_oracle
def test_batch_matmul_gradient_with_batch_known_at_run_time(tf_oracle):
    def make():
        x = tf.placeholder(tf.float32, [None, 1, 3, 4], name="x")
        y = tf.placeholder(tf.float32, [None, 4, 2], name="y")
        return tf.reduce_sum(tf.raw_op("BatchMatMulV2", x, y) ** 2.0), [x, y]
    gradients_both(tf_oracle, make, {"x": _values((2, 1, 3, 4), 7), "y": _values((5, 4, 2), 8)})


EINSUMS = [
    ("BTNH,BSNH->BNTS", [(2, 3, 2, 4), (2, 5, 2, 4)]),
    ("BNTS,BSNH->BTNH", [(2, 2, 3, 5), (2, 5, 2, 4)]),
    ("btd,dnh->btnh", [(2, 3, 4), (4, 2, 3)]),
    ("btnh,nhd->btd", [(2, 3, 2, 3), (2, 3, 4)]),
    ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("abc,cd->ad", [(2, 3, 4), (4, 5)]),
    ("ab,cd->", [(2, 3), (4, 5)]),
    ("ij,jk->ki", [(2, 3), (3, 4)]),
    ("i,i->", [(0,), (0,)]),
    ("abc->cb", [(2, 3, 4)]),
    ("ba->ab", [(2, 3)]),
]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("equation, shapes", EINSUMS)
def test_einsum_matches_tensorflow(tf_oracle, equation, shapes):
    values = {f"x{k}": _values(s, 10 + k) for k, s in enumerate(shapes)}
    run_both(tf_oracle, lambda: [tf.einsum(equation, *[tf.placeholder(tf.float32, s, name=f"x{k}")
                                                       for k, s in enumerate(shapes)])], values)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("equation, shapes", [e for e in EINSUMS if 0 not in sum(e[1], ())])
def test_einsum_gradients_match_tensorflow(tf_oracle, equation, shapes):
    def make():
        xs = [tf.placeholder(tf.float32, s, name=f"x{k}") for k, s in enumerate(shapes)]
        z = tf.einsum(equation, *xs)
        return tf.reduce_sum(z * z), xs
    gradients_both(tf_oracle, make, {f"x{k}": _values(s, 20 + k) for k, s in enumerate(shapes)})


HOSTILE_EQUATIONS = [
    ("ii,ij->i", "diagonals and traces are not supported"),
    ("...ij,jk->...ik", "ellipsis"),
    ("ij,jk->ikz", "in no input"),
    ("ij,jk->ik->i", "malformed"),
    ("ij,jk", "exactly one '->'"),
    ("i1,jk->ik", "labels are letters"),
    ("ij->", "names 1 inputs, the node has 2"),
    ("ij,jk->ii", "repeats a label in its output"),
    ("a" * 300 + ",b->b", "more than 256"),
]


@pytest.mark.parametrize("equation, why", HOSTILE_EQUATIONS)
def test_hostile_equations_are_refused_by_both_runtimes(tmp_path, cc_runner, equation, why):
    with pytest.raises(ValueError, match="Einsum 'z'.*" + why.replace(".", r"\.")):
        with tf.Graph().as_default():
            tf.raw_op("Einsum", [tf.placeholder(tf.float32, [2, 2]), tf.placeholder(tf.float32, [2, 2])],
                      equation=equation, name="z")
    g = cc.Graph()
    g.placeholder("a", np.float32, [2, 2])
    g.placeholder("b", np.float32, [2, 2])
    g.op("z", "Einsum", ["a", "b"], np.float32, N=cc.graph_pb2.AttrValue(i=2),
         equation=cc.graph_pb2.AttrValue(s=equation.encode()))
    line = cc.fails(cc_runner, 3, g.save(tmp_path / "m.pb"), "--random")
    assert "'z'" in line and why in line


def test_einsum_label_sizes_must_agree_in_both_runtimes(tmp_path, cc_runner):
    with pytest.raises(ValueError, match="label 'j' is 3 in one place and 4 in another"):
        with tf.Graph().as_default():
            tf.einsum("ij,jk->ik", tf.placeholder(tf.float32, [2, 3]), tf.placeholder(tf.float32, [4, 5]))
    g = cc.Graph()
    g.placeholder("a", np.float32)
    g.placeholder("b", np.float32)
    g.op("z", "Einsum", ["a", "b"], np.float32, N=cc.graph_pb2.AttrValue(i=2),
         equation=cc.graph_pb2.AttrValue(s=b"ij,jk->ik"))
    line = cc.fails(cc_runner, 4, g.save(tmp_path / "m.pb"), "--feed", "a=[[1,2,3]]", "--feed", "b=[[1],[2]]")
    assert "'z'" in line and "label 'j' is 3 in one place and 2 in another" in line


def test_batch_matmul_mismatches_are_refused_by_both_runtimes(tmp_path, cc_runner):
    with pytest.raises(ValueError, match="BatchMatMulV2 'z'.*cannot be broadcast"):
        with tf.Graph().as_default():
            tf.raw_op("BatchMatMulV2", tf.placeholder(tf.float32, [2, 3, 4]), tf.placeholder(tf.float32, [3, 4, 5]),
                      name="z")
    g = cc.Graph()
    g.placeholder("a", np.float32)
    g.placeholder("b", np.float32)
    g.op("z", "BatchMatMul", ["a", "b"], np.float32)
    line = cc.fails(cc_runner, 4, g.save(tmp_path / "m.pb"), "--feed", "a=[[[1,2]]]",
                    "--feed", "b=[[[1],[2]],[[3],[4]]]")
    assert "'z'" in line and "BatchMatMulV2 broadcasts them" in line


@pytest.mark.tf_oracle
@pytest.mark.parametrize("op", ["FusedBatchNorm", "FusedBatchNormV2"])
@pytest.mark.parametrize("is_training", [True, False])
def test_fused_batch_norm_v1_v2_match_tensorflow(tf_oracle, op, is_training):
    x, scale, offset = _values((2, 3, 5, 4), 30), _values((4,), 31) + 2, _values((4,), 32)
    mean, var = _values((4,), 33), np.abs(_values((4,), 34)) + 0.5
    extra = {"U": tf.float32} if op == "FusedBatchNormV2" else {}

    def make():
        ins = [tf.placeholder(tf.float32, v.shape, name=k) for k, v in
               (("x", x), ("scale", scale), ("offset", offset), ("mean", mean), ("variance", var))]
        # at inference TF leaves reserve_space_1 and _2 unspecified (zeros of either sign): not compared
        return list(tf.raw_op(op, *ins, epsilon=0.001, is_training=is_training, **extra))[:5 if is_training else 3]
    feeds = {"x": x, "scale": scale, "offset": offset, "mean": mean, "variance": var}
    run_both(tf_oracle, make, feeds)

    def loss():
        ins = [tf.placeholder(tf.float32, v.shape, name=k) for k, v in
               (("x", x), ("scale", scale), ("offset", offset), ("mean", mean), ("variance", var))]
        y = tf.raw_op(op, *ins, epsilon=0.001, is_training=is_training, **extra)[0]
        return tf.reduce_sum(y * w), ins[:3]  # linear in y: sum(y * y) is nearly constant in x, ill-conditioned
    w = _values(x.shape, 35)
    gradients_both(tf_oracle, loss, feeds)


def test_every_new_op_is_registered():
    assert set(NEW_OPS) <= set(REGISTRY)
