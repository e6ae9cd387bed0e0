"""Functions whose arguments and results are lists (number_attr / type_list_attr, sized by the attr
values the call passes in its func attr, body attrs written "$N", whole output lists "node:out_arg")
in the Python Session, checked against numpy; list sizes a file gets wrong refused in one line.
TensorFlow runs list arguments in a node whose op is the function's name, which graphdef does not
read yet, so TensorFlow is no oracle here; graphrun-cc refuses list arguments at load, in one line."""

import numpy as np
import pytest

import graphdef as tf
from graphdef._proto import graph_pb2
from graphdef.wire.serialize import load
from tests.support import cc_helpers
from tests.support.numerics_policy import assert_same

F32, I32 = tf.float32.enum, tf.int32.enum


def _mixed_library():
    """swap(args: Tin) -> (out: Tout): IdentityN of the list reversed by element references."""
    lib = graph_pb2.FunctionDefLibrary()
    f = lib.function.add()
    f.signature.name = "swap"
    f.signature.input_arg.add(name="args", type_list_attr="Tin")
    f.signature.output_arg.add(name="out", type_list_attr="Tout")
    f.signature.attr.add(name="Tin", type="list(type)")
    f.signature.attr.add(name="Tout", type="list(type)")
    node = f.node_def.add(name="flip", op="IdentityN", input=["args:1", "args:0"])
    node.attr["T"].placeholder = "Tout"
    f.ret["out"] = "flip:output"
    return lib


def _sum_graph(n):
    g = graph_pb2.GraphDef()
    lib = g.library
    f = lib.function.add()
    f.signature.name = "sum_all"
    f.signature.input_arg.add(name="xs", number_attr="N", type_attr="T")
    f.signature.output_arg.add(name="total", type_attr="T")
    f.signature.output_arg.add(name="second", type_attr="T")
    f.signature.output_arg.add(name="both", number_attr="N", type_attr="T")
    f.signature.attr.add(name="N", type="int", has_minimum=True, minimum=2)
    f.signature.attr.add(name="T", type="type")
    node = f.node_def.add(name="sum", op="AddN", input=["xs"])
    node.attr["N"].placeholder = "N"
    node.attr["T"].placeholder = "T"
    node = f.node_def.add(name="same", op="IdentityN", input=["xs"])  # a whole list in, a whole list out
    node.attr["T"].list.type.extend([F32] * n)
    f.ret["total"] = "sum:sum:0"
    f.ret["second"] = "xs:1"
    f.ret["both"] = "same:output"
    for i in range(n):
        x = g.node.add(name=f"x{i}", op="Placeholder")
        x.attr["dtype"].type = F32
    call = g.node.add(name="call", op="PartitionedCall", input=[f"x{i}" for i in range(n)])
    call.attr["Tin"].list.type.extend([F32] * n)
    call.attr["Tout"].list.type.extend([F32] * (2 + n))
    call.attr["f"].func.name = "sum_all"
    call.attr["f"].func.attr["N"].i = n
    call.attr["f"].func.attr["T"].type = F32
    return g


def _swap_graph():
    g = graph_pb2.GraphDef()
    g.library.CopyFrom(_mixed_library())
    for name, dtype in (("a", F32), ("b", I32)):
        g.node.add(name=name, op="Placeholder").attr["dtype"].type = dtype
    call = g.node.add(name="call", op="StatefulPartitionedCall", input=["a", "b"])
    call.attr["Tin"].list.type.extend([F32, I32])
    call.attr["Tout"].list.type.extend([I32, F32])
    call.attr["f"].func.name = "swap"
    call.attr["f"].func.attr["Tin"].list.type.extend([F32, I32])
    call.attr["f"].func.attr["Tout"].list.type.extend([I32, F32])
    return g


def _run(graph_def, tmp_path, feeds, fetches):
    model = tmp_path / "m.pb"
    model.write_bytes(graph_def.SerializeToString())
    with tf.Session(graph=load(model)) as sess:
        return sess.run(fetches, {f"{k}:0": v for k, v in feeds.items()})


@pytest.mark.parametrize("n", [2, 3, 5])
def test_a_number_attr_list_argument_runs_in_the_session(tmp_path, n):
    rng = np.random.default_rng(n)
    xs = [rng.normal(size=(2, 3)).astype(np.float32) for _ in range(n)]
    fetches = ["call:0", "call:1"] + [f"call:{2 + i}" for i in range(n)]
    got = _run(_sum_graph(n), tmp_path, {f"x{i}": x for i, x in enumerate(xs)}, fetches)
    total = np.zeros((2, 3), np.float32)
    for x in xs:  # AddN adds in order, in float32
        total = total + x
    assert_same(got[0], total)
    assert_same(got[1], xs[1])
    for value, x in zip(got[2:], xs):
        assert_same(value, x)


def test_a_type_list_argument_with_element_references_runs_in_the_session(tmp_path):
    a, b = np.array([1.5, -2.0], np.float32), np.array([[3, 4]], np.int32)
    got = _run(_swap_graph(), tmp_path, {"a": a, "b": b}, ["call:0", "call:1"])
    assert_same(got[0], b)
    assert_same(got[1], a)


def test_graphrun_cc_refuses_list_arguments_at_load_in_one_line(cc_runner, tmp_path):
    model = tmp_path / "m.pb"
    model.write_bytes(_sum_graph(3).SerializeToString())
    line = cc_helpers.fails(cc_runner, 3, model, "--feed", "x0=1", "--feed", "x1=1", "--feed", "x2=1")
    assert "'xs' is a list" in line, line


BAD = {
    "count from no attr": (lambda g: g.node[-1].attr["f"].func.attr.pop("N"), "attr 'N', which neither the call"),
    "a huge count": (lambda g: setattr(g.node[-1].attr["f"].func.attr["N"], "i", 1 << 40), "a list of"),
    "an element past the list": (lambda g: g.library.function[0].ret.__setitem__("second", "xs:7"),
                                 "argument 'xs' has 3 tensors"),
    "a placeholder nobody sets": (lambda g: g.library.function[0].node_def[0].attr["T"].__setattr__("placeholder",
                                                                                                    "U"),
                                  "attr 'T' is $U, which the call does not set"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_list_sizes_a_file_gets_wrong_are_one_line(tmp_path, name):
    change, words = BAD[name]
    g = _sum_graph(3)
    change(g)
    model = tmp_path / "bad.pb"
    model.write_bytes(g.SerializeToString())
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)").replace("$", r"\$")):
        load(model)
