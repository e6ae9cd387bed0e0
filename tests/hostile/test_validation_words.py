"""A model file that breaks an op's rules (an input's dtype or count, a missing attr, a control
input before a data one, a Const whose value disagrees with its dtype, a count attr out of range, a
type attr naming no dtype or one the op does not accept, a type list too short, a ref input that is
no variable) is refused by graphrun and graphrun-cc in the same line after their program's name,
exit 3 both. The expected lines are written out here, so a change of words in either runtime fails.
Where a line names the runtime's own limit, each names itself: graphdef (the Python library graphrun
runs) or graphrun-cc."""

import pytest

from tests.support.cc_helpers import fails as cc_fails
from tests.support.graphrun_helpers import fails
from tests.support.pbtxt_helpers import const, node, write_pbtxt

FLOAT = "type: DT_FLOAT"
A = const("a", "DT_FLOAT", (), [1.0], "float_val")
V = const("v", "DT_FLOAT", (2,), [1.0, 2.0], "float_val")
AXIS = const("axis", values=(0,))

# class -> (the file's nodes, the line after "<program>: <path>: ")
CASES = {
    "input dtype from an attr": (
        [A, node("b", "Neg", ["a"], T="type: DT_DOUBLE")],
        "node 'b' (Neg): input 0 ('x') is float32 from 'a:0' but the node expects float64 (attr T)"),
    "input dtype of a type list": (
        [A, node("b", "IdentityN", ["a"], T="list { type: DT_INT32 }")],
        "node 'b' (IdentityN): input 0 ('input') is float32 from 'a:0' but the node expects int32 (attr T)"),
    "missing attr": (
        [A, node("b", "Neg", ["a"])],
        "node 'b' (Neg): missing attr 'T'"),
    "one input too few": (
        [A, node("b", "AddV2", ["a"], T=FLOAT)],
        "node 'b' (AddV2): has 1 data input but AddV2 takes 2"),
    "no input": (
        [A, node("b", "Neg", ["^a"], T=FLOAT)],
        "node 'b' (Neg): has 0 data inputs but Neg takes 1"),
    "one input too many": (
        [A, node("b", "AddV2", ["a", "a", "a"], T=FLOAT)],
        "node 'b' (AddV2): has 3 data inputs but AddV2 takes 2"),
    "a type list longer than the inputs": (
        [A, node("b", "IdentityN", ["a"], T="list { type: DT_FLOAT type: DT_FLOAT }")],
        "node 'b' (IdentityN): has 1 data input but IdentityN takes 2"),
    "control before data": (
        [A, node("b", "Neg", ["^a", "a"], T=FLOAT)],
        "node 'b' (Neg): data input 'a' comes after a control input; control inputs must come last"),
    "Const dtype against its value": (
        [const("c", "DT_INT32", (), [1.0], "float_val").replace("tensor { dtype: DT_INT32",
                                                                 "tensor { dtype: DT_FLOAT")],
        "node 'c' (Const): attr 'value' holds a float32 tensor but attr 'dtype' is int32"),
    "Pack N zero": (
        [A, node("p", "Pack", ["a"], T=FLOAT, N="i: 0")],
        "node 'p' (Pack): attr 'N' is 0; Pack needs at least 1"),
    "Pack N past the inputs": (
        [A, node("p", "Pack", ["a"], T=FLOAT, N="i: 1000000000000")],
        "node 'p' (Pack): has 1 data input but Pack takes 1000000000000"),
    "AddN N negative": (
        [A, node("p", "AddN", ["a"], T=FLOAT, N="i: -3")],
        "node 'p' (AddN): attr 'N' is -3; AddN needs at least 1"),
    "ConcatV2 N one": (
        [A, AXIS, node("p", "ConcatV2", ["a", "axis"], T=FLOAT, N="i: 1")],
        "node 'p' (ConcatV2): attr 'N' is 1; ConcatV2 needs at least 2"),
    "Split num_split zero": (
        [AXIS, V, node("s", "Split", ["axis", "v"], T=FLOAT, num_split="i: 0")],
        "node 's' (Split): attr 'num_split' is 0; Split needs at least 1"),
    "Split num_split huge": (
        [AXIS, V, node("s", "Split", ["axis", "v"], T=FLOAT, num_split="i: 1000000000000")],
        "node 's' (Split): attr 'num_split' asks for 1000000000000 outputs; {runtime} allows at most 1048576"),
    "Split num_split just past the limit": (
        [AXIS, V, node("s", "Split", ["axis", "v"], T=FLOAT, num_split="i: 1048577")],
        "node 's' (Split): attr 'num_split' asks for 1048577 outputs; {runtime} allows at most 1048576"),
    "Unpack num huge": (
        [V, node("u", "Unpack", ["v"], T=FLOAT, num="i: 1000000000000")],
        "node 'u' (Unpack): attr 'num' asks for 1000000000000 outputs; {runtime} allows at most 1048576"),
    "IdentityN DT_INVALID": (
        [A, node("i", "IdentityN", ["a"], T="list { type: DT_INVALID }")],
        "node 'i' (IdentityN): attr 'T' lists DT_INVALID, a dtype {runtime} does not support"),
    "IdentityN a dtype number no proto names": (
        [A, node("i", "IdentityN", ["a"], T="list { type: 555 }")],
        "node 'i' (IdentityN): attr 'T' lists DataType(555), a dtype {runtime} does not support"),
    "a type attr a dtype number no proto names": (
        [A, node("b", "Neg", ["a"], T="type: 999")],
        "node 'b' (Neg): attr 'T' is DataType(999), a dtype {runtime} does not support"),
    "a dtype the attr does not accept": (
        [A, node("b", "Shape", ["a"], T=FLOAT, out_type=FLOAT)],
        "node 'b' (Shape): attr 'out_type' is float32; Shape accepts int32, int64"),
    "IdentityN listing no dtype": (
        [A, node("i", "IdentityN", [], T="list { }")],
        "node 'i' (IdentityN): attr 'T' lists 0 types; IdentityN needs at least 1"),
    "a ref input that is no variable": (
        [A, node("b", "Assign", ["a", "a"], T=FLOAT)],
        "node 'b' (Assign): input 0 ('ref') must name a variable node directly, not node 'a' (Const)"),
    "a type attr DT_INVALID": (
        [A, node("b", "Neg", ["a"], T="type: DT_INVALID")],
        "node 'b' (Neg): attr 'T' is DT_INVALID, a dtype {runtime} does not support"),
}


@pytest.mark.parametrize("case", CASES)
def test_both_runtimes_refuse_in_the_same_line(runner, tmp_path, capsys, case):
    nodes, words = CASES[case]
    model = write_pbtxt(tmp_path, "\n".join(nodes))
    py_line = fails(capsys, 3, model)
    cc_line = cc_fails(runner, 3, model)
    assert py_line == f"graphrun: {model}: {words.format(runtime='graphdef')}\n"
    assert cc_line == f"graphrun-cc: {model}: {words.format(runtime='graphrun-cc')}"


def test_a_node_under_a_prefix_is_named_once(tmp_path):
    """Imported under a name prefix, the node is named by its name in the file, once."""
    import graphdef as tf
    from graphdef._proto import graph_pb2
    from google.protobuf import text_format

    graph_def = text_format.Parse("\n".join([A, node("b", "Neg", ["a"], T="type: DT_INT32")]), graph_pb2.GraphDef())
    with tf.Graph().as_default(), pytest.raises(ValueError) as e:
        tf.import_graph_def(graph_def, name="outer")
    assert str(e.value).endswith(
        "node 'b' (Neg): input 0 ('x') is float32 from 'outer/a:0' but the node expects int32 (attr T)"), e.value


def test_the_building_api_uses_the_same_words_after_the_op(tmp_path):
    """tf.* builders name the op and node first, as TF's Python does; the words are the file's, and
    where a builder's caller can fix the dtypes, the fix follows."""
    import numpy as np

    import graphdef as tf
    from graphdef.ops.registry import raw_op

    with tf.Graph().as_default():
        x = tf.constant(np.float32(1.0), name="a")
        with pytest.raises(TypeError) as e:
            raw_op("Neg", x, T=tf.float64, name="b")
        assert str(e.value) == ("Neg 'b': input 0 ('x') is float32 from 'a:0' but the node expects float64 "
                                "(attr T); cast one side with tf.cast")
        y = tf.constant(np.int32(1), name="c")
        with pytest.raises(TypeError) as e:
            tf.add(x, y, name="d")
        assert str(e.value) == ("AddV2 'd': input 1 ('y') is int32 from 'c:0' but the node expects float32 "
                                "(attr T); cast one side with tf.cast")
        with pytest.raises(ValueError) as e:
            raw_op("Split", 0, tf.constant([1.0, 2.0]), num_split=2_000_000, name="s")
        assert str(e.value) == "Split 's': attr 'num_split' asks for 2000000 outputs; graphdef allows at most 1048576"
