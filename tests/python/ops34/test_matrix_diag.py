"""MatrixDiagPartV3, MatrixDiagV3, MatrixSetDiagV3 and MatrixBandPart (graphdef/ops/matrix_diag.py) against
TensorFlow: bands of diagonals in every alignment, batches, non-square matrices, gradients, bad bands."""

import numpy as np
import pytest

import graphdef as tf
from graphdef.ops import matrix_diag as md
from tests.python.ops.test_opdefs import test_declaration_matches_tensorflow as _matches_tensorflow
from tests.python.ops34.runtimes import (check_both_refuse, check_cc_agrees, check_cc_refuses,
                                        check_graphrun_agrees, check_refused)
from tests.support.op_oracle import gradients_both, run_both, tf_oracle  # noqa: F401 - a fixture

OPS = ["MatrixDiagPartV3", "MatrixDiagV3", "MatrixSetDiagV3", "MatrixBandPart", "MatrixDiagPartV2", "MatrixDiagV2",
       "MatrixSetDiagV2", "MatrixDiagPart", "MatrixDiag", "MatrixSetDiag"]
RNG = np.random.default_rng(11)
BANDS = [0, 2, -1, [-1, 2], [0, 0], [-2, -1], [1, 2]]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("op_type", OPS)
def test_declaration_matches_tensorflow(tf_oracle, op_type):
    _matches_tensorflow(tf_oracle, op_type)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("shape", [(3, 4), (2, 5, 3), (4, 4)])
@pytest.mark.parametrize("k", BANDS)
@pytest.mark.parametrize("align", md.ALIGNS)
def test_diag_part_diag_and_set_diag_match_tensorflow(tf_oracle, shape, k, align):
    x = RNG.integers(-50, 50, size=shape).astype(np.int32)

    def make():
        m = tf.placeholder(tf.int32, shape, name="m")
        part = md.matrix_diag_part(m, k=k, padding_value=-7, align=align)
        rebuilt = md.matrix_diag(part, k=k, num_rows=shape[-2], num_cols=shape[-1], padding_value=3, align=align)
        least = md.matrix_diag(part, k=k, align=align)  # num_rows/num_cols -1: the least that fits
        replaced = md.matrix_set_diag(m, part * 2, k=k, align=align)
        return [part, rebuilt, least, replaced]
    run_both(tf_oracle, make, {"m": x})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("lower, upper", [(0, -1), (-1, 0), (1, 2), (0, 0), (-1, -1), (3, 4)])
@pytest.mark.parametrize("dtype, index", [(np.float32, np.int64), (np.int64, np.int32), (np.bool_, np.int64)])
def test_band_part_matches_tensorflow(tf_oracle, lower, upper, dtype, index):
    x = RNG.integers(0, 3, size=(2, 3, 4)).astype(dtype)

    def make():
        m = tf.placeholder(tf.as_dtype(dtype), [2, 3, 4], name="m")
        return [tf.raw_op("MatrixBandPart", m, index(lower), index(upper))]
    run_both(tf_oracle, make, {"m": x})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("k", [1, [-1, 1]])
def test_gradients_match_tensorflow(tf_oracle, k):
    def make():
        m = tf.placeholder(tf.float64, [2, 3, 4], name="m")
        d = tf.placeholder(tf.float64, None, name="d")
        part = md.matrix_diag_part(m * m, k=k)
        built = md.matrix_diag(d * d, k=k, num_rows=3, num_cols=4)
        replaced = md.matrix_set_diag(m, d * 3.0, k=k)
        band = md.matrix_band_part(m * m, 1, 0)
        loss = sum(tf.reduce_sum(t * tf.constant(RNG.normal(size=s))) for t, s in (
            (part, (2, 3) if k == 1 else (2, 3, 3)), (built, (2, 3, 4)), (replaced, (2, 3, 4)), (band, (2, 3, 4))))
        return loss, [m, d]
    d = RNG.normal(size=(2, 3) if k == 1 else (2, 3, 3))
    gradients_both(tf_oracle, make, {"m": RNG.normal(size=(2, 3, 4)), "d": d})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("shape", [(3, 4), (2, 4, 3), (3, 3)])
@pytest.mark.parametrize("k", [0, 1, [-1, 1]])
def test_older_forms_match_tensorflow(tf_oracle, shape, k):
    """V2 is V3 packed LEFT_LEFT; V1 is the main diagonal, square matrices from it."""
    x = RNG.normal(size=shape).astype(np.float32)

    def make():
        m = tf.placeholder(tf.float32, shape, name="m")
        kk = np.int32(k)
        part = tf.raw_op("MatrixDiagPartV2", m, kk, np.float32(0.5))
        outs = [part, tf.raw_op("MatrixDiagV2", part, kk, np.int32(shape[-2]), np.int32(shape[-1]), np.float32(-1)),
                tf.raw_op("MatrixSetDiagV2", m, part * 2.0, kk)]
        if k == 0:
            main = tf.raw_op("MatrixDiagPart", m)
            outs += [main, tf.raw_op("MatrixDiag", main), tf.raw_op("MatrixSetDiag", m, main * 3.0)]
        return outs
    run_both(tf_oracle, make, {"m": x})


@pytest.mark.tf_oracle
def test_older_forms_gradients_match_tensorflow(tf_oracle):
    def make():
        m = tf.placeholder(tf.float64, [2, 3, 4], name="m")
        d = tf.placeholder(tf.float64, [2, 3], name="d")
        outs = [tf.raw_op("MatrixDiagPartV2", m * m, np.int32(1), np.float64(0)),
                tf.raw_op("MatrixDiagV2", d * d, np.int32(1), np.int32(3), np.int32(4), np.float64(0)),
                tf.raw_op("MatrixSetDiagV2", m, d * 3.0, np.int32(1)), tf.raw_op("MatrixDiagPart", m * m),
                tf.raw_op("MatrixDiag", d * d), tf.raw_op("MatrixSetDiag", m, d * 3.0)]
        loss = sum(tf.reduce_sum(t * tf.constant(RNG.normal(size=t.shape.as_list()))) for t in outs)
        return loss, [m, d]
    gradients_both(tf_oracle, make, {"m": RNG.normal(size=(2, 3, 4)), "d": RNG.normal(size=(2, 3))})


def test_graphrun_gives_the_sessions_answers(tmp_path):
    def make():
        m = tf.placeholder(tf.float32, [2, 3, 4], name="m")
        part = md.matrix_diag_part(m, k=[-1, 1], padding_value=0.5)
        main = tf.raw_op("MatrixDiagPart", m)
        return [part, md.matrix_diag(part, k=[-1, 1]), md.matrix_set_diag(m, part, k=[-1, 1]),
                md.matrix_band_part(m, 0, -1), tf.raw_op("MatrixDiagPartV2", m, np.int32([0, 1]), np.float32(2)),
                main, tf.raw_op("MatrixDiag", main), tf.raw_op("MatrixSetDiag", m, main * 2.0)]
    check_graphrun_agrees(tmp_path, make, {"m": RNG.normal(size=(2, 3, 4)).astype(np.float32)})


def test_graphrun_cc_names_the_op_it_lacks(tmp_path, cc_runner):
    def make():
        return [md.matrix_diag_part(tf.placeholder(tf.float32, [3, 3], name="m"), k=[-1, 1], name="z")]
    line = check_cc_refuses(tmp_path, cc_runner, make, {"m": np.ones((3, 3), np.float32)}, "MatrixDiagPartV3", "z")
    assert line.endswith("no kernel for MatrixDiagPartV3 (z)"), line


def test_graphrun_cc_gives_the_sessions_band_parts(tmp_path, cc_runner):
    def make():
        m = tf.placeholder(tf.float32, [2, 3, 4], name="m")
        b = tf.placeholder(tf.bool, [4, 2], name="b")
        bands = [(0, -1), (-1, 0), (1, 1), (0, 0), (-1, -1), (3, 4), (2, 0)]
        return ([md.matrix_band_part(m, lo, up) for lo, up in bands]
                + [md.matrix_band_part(b, np.int32(1), np.int32(0)), md.matrix_band_part(tf.zeros([0, 3, 3]), 1, 1)])
    check_cc_agrees(tmp_path, cc_runner, make, {"m": RNG.normal(size=(2, 3, 4)).astype(np.float32),
                                                "b": RNG.random((4, 2)) > 0.3})


# -- hostile bands and shapes ----------------------------------------------------------------------

@pytest.mark.parametrize("k, words", [
    ([2, -1], "lower_diag_index must not be larger than upper_diag_index: 2 > -1"),
    ([-3, 0], "lower_diag_index is out of bound: -3. It must be between -3 and 4"),
    ([0, 4], "upper_diag_index is out of bound: 4 It must be between -3 and 4"),
    ([0, 1, 2], "diag_index must have only one or two elements, received 3 elements."),
    ([-2 ** 31, 2 ** 31 - 1], "lower_diag_index is out of bound"),
])
def test_bad_bands_are_refused(tmp_path, k, words):
    def make():
        m = tf.placeholder(tf.int32, None, name="m")
        kk = tf.placeholder(tf.int32, None, name="k")
        return [tf.raw_op("MatrixDiagPartV3", m, kk, np.int32(0), name="z")]
    check_refused(tmp_path, make, {"m": np.zeros((3, 4), np.int32), "k": np.int32(k)}, "z", words)


@pytest.mark.parametrize("rows, cols, words", [
    (5, 7, "The number of rows or columns is not consistent with the specified d_lower, d_upper, and diagonal."),
    (1, -1, "The number of rows is too small."),
    (2 ** 31 - 1, 3, "over the limit"),  # consistent (the columns fit), but 24 GiB
    (2 ** 20, 2 ** 20 + 1, "over the limit"),
])
def test_bad_matrix_sizes_are_refused(tmp_path, monkeypatch, rows, cols, words):
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", str(1 << 30))

    def make():
        d = tf.placeholder(tf.int32, None, name="d")
        r, c = tf.placeholder(tf.int32, None, name="r"), tf.placeholder(tf.int32, None, name="c")
        return [tf.raw_op("MatrixDiagV3", d, np.int32(1), r, c, np.int32(0), name="z")]
    diag = np.arange(2 ** 20, dtype=np.int32) if rows == 2 ** 20 else np.int32([1, 2])
    check_refused(tmp_path, make, {"d": diag, "r": np.int32(rows), "c": np.int32(cols)}, "z", words)


def test_a_diagonal_of_the_wrong_length_is_refused(tmp_path):
    def make():
        m, d = tf.placeholder(tf.int32, None, name="m"), tf.placeholder(tf.int32, None, name="d")
        return [tf.raw_op("MatrixSetDiagV3", m, d, np.int32([0, 1]), name="z")]
    check_refused(tmp_path, make, {"m": np.zeros((3, 4), np.int32), "d": np.int32([[1, 2, 3]] * 3)}, "z",
                  "The number of diagonals provided in `diag` is not consistent with `lower_diag_index`")
    check_refused(tmp_path, make, {"m": np.zeros((3, 4), np.int32), "d": np.int32([[1, 2], [4, 5]])}, "z",
                  "Either first dimensions of diagonal don't match input.shape[:-2]")


@pytest.mark.parametrize("lower, upper, words", [
    (5, 0, "num_lower must be negative or less or equal to number of rows (3) got: 5"),
    (0, 5, "num_upper must be negative or less or equal to number of columns (4) got: 5"),
])
def test_bad_band_part_bounds_are_refused(tmp_path, cc_runner, lower, upper, words):
    def make():
        lo, up = tf.placeholder(tf.int64, None, name="lo"), tf.placeholder(tf.int64, None, name="up")
        return [tf.raw_op("MatrixBandPart", tf.placeholder(tf.int32, None, name="m"), lo, up, name="z")]
    feeds = {"m": np.zeros((3, 4), np.int32), "lo": np.int64(lower), "up": np.int64(upper)}
    check_refused(tmp_path, make, feeds, "z", words)
    assert words in check_both_refuse(tmp_path, cc_runner, make, feeds, "z")


def test_vectors_are_refused_when_building():
    g = tf.Graph()
    with g.as_default():
        v = tf.placeholder(tf.float32, [4], name="v")
        with pytest.raises(ValueError, match=r"MatrixBandPart 'a': input must be at least 2-dim, received shape"):
            md.matrix_band_part(v, 0, -1, name="a")
        with pytest.raises(ValueError, match=r"MatrixDiagPartV3 'b': input must be at least 2-dim"):
            md.matrix_diag_part(v, name="b")


def test_a_model_files_unknown_align_is_refused_when_read(tmp_path, capsys):
    """A GraphDef whose MatrixDiagPartV3 says align 'UP_DOWN': one line naming the node, from graphrun's
    loader, before anything runs."""
    from tests.support.graphrun_helpers import graphrun
    g = tf.Graph()
    with g.as_default():
        md.matrix_diag_part(tf.placeholder(tf.float32, [3, 3], name="m"), name="z")
    graph_def = g.as_graph_def()
    (node,) = [n for n in graph_def.node if n.name == "z"]
    node.attr["align"].s = b"UP_DOWN"
    (tmp_path / "m.pb").write_bytes(graph_def.SerializeToString())
    np.save(tmp_path / "m.npy", np.ones((3, 3), np.float32))
    code, out, err = graphrun(capsys, tmp_path / "m.pb", "--feed", f"m=@{tmp_path / 'm.npy'}", "--fetch", "z:0")
    assert code != 0 and out == "" and err.count("\n") == 1, err
    assert "'z'" in err and "attr 'align' is 'UP_DOWN'" in err, err


def test_a_batch_of_no_matrices_lists_no_positions():
    """A [0, 30000, 30000] input has no elements, yet its band holds 9 * 10^8 positions: none are listed."""
    import resource
    before = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    x = np.zeros((0, 30000, 30000), np.float32)
    part = md.MATRIX_DIAG_PART_V3.kernel(x, np.int32([-29999, 29999]), np.float32(0), align="RIGHT_LEFT")
    assert part.shape == (0, 59999, 30000)
    assert md.MATRIX_SET_DIAG_V3.kernel(x, part, np.int32([-29999, 29999]), align="RIGHT_LEFT").shape == x.shape
    assert resource.getrusage(resource.RUSAGE_SELF).ru_utime - before < 1.0
