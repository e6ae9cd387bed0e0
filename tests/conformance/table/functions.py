"""Conformance cases: functional ops calling FunctionDefs of the graph's library (GraphDef.library).

The functions are written here as FunctionDef protos, naming body tensors TensorFlow's way
("node:out_arg:index"); the expected values are numpy's.
"""

import numpy as np

import graphdef as tf
from graphdef._proto import graph_pb2
from graphdef.ops.registry import build
from graphdef.framework.graph import get_default_graph
from graphdef.wire.functions import attach_library
from graphdef.wire.serialize import import_nodes, ndarray_to_proto

from .base import case, f32, feed

F, I = tf.float32, tf.int32  # noqa: E741 (I for int32, as F for float32)


def function(name, args, results, nodes, ret):
    """A FunctionDef: args and results as (name, dtype); nodes as (name, op, inputs, T or None, value)."""
    fdef = graph_pb2.FunctionDef()
    fdef.signature.name = name
    for arg, dtype in args:
        fdef.signature.input_arg.add(name=arg, type=dtype.enum)
    for result, dtype in results:
        fdef.signature.output_arg.add(name=result, type=dtype.enum)
    for node_name, op, inputs, dtype, value in nodes:
        node = fdef.node_def.add(name=node_name, op=op)
        node.input.extend(inputs)
        if op == "Const":
            node.attr["dtype"].type = tf.as_dtype(value.dtype).enum
            ndarray_to_proto(value, node.attr["value"].tensor)
        else:
            node.attr["T"].type = dtype.enum
    for key, value in ret.items():
        fdef.ret[key] = value
    return fdef


def library(*fdefs):
    lib = graph_pb2.FunctionDefLibrary()
    for fdef in fdefs:
        lib.function.add().CopyFrom(fdef)
    attach_library(get_default_graph(), lib, import_nodes)


def func(name):
    value = graph_pb2.NameAttrList()
    value.name = name
    return value


@case("partitioned_call", "PartitionedCall and StatefulPartitionedCall of f(a, b) = (a * b + a, a - b), "
      "the second result through a nested PartitionedCall of g(a, b) = a - b.")
def _():
    library(
        function("g", [("a", F), ("b", F)], [("d", F)], [("sub", "Sub", ["a", "b"], F, None)], {"d": "sub:z:0"}),
        function("f", [("a", F), ("b", F)], [("y", F), ("d", F)], [
            ("mul", "Mul", ["a", "b"], F, None),
            ("add", "AddV2", ["mul:z:0", "a"], F, None),
        ], {"y": "add:z:0", "d": "inner:output:0"}))
    fdef = get_default_graph().functions.defs["f"]
    inner = fdef.node_def.add(name="inner", op="PartitionedCall", input=["a", "b"])
    inner.attr["Tin"].list.type.extend([F.enum, F.enum])
    inner.attr["Tout"].list.type.extend([F.enum])
    inner.attr["f"].func.name = "g"
    a, b = f32(1.5, -2.0, 0.25), f32(3.0, 0.5, -8.0)
    pa, pb = feed("a", a), feed("b", b)
    attrs = {"Tin": (F, F), "Tout": (F, F), "f": func("f")}
    build("PartitionedCall", [[pa, pb]], name="call", attrs=attrs)
    build("StatefulPartitionedCall", [[pa, pb]], name="stateful_call", attrs=attrs)
    y = a * b + a  # float32 numpy: each op rounds once, as the graph's do
    return {"a": a, "b": b}, {"call:0": y, "call:1": a - b, "stateful_call:0": y, "stateful_call:1": a - b}


@case("if", "If and StatelessIf: then_branch(x) = x * 3, else_branch(x) = x - 1; a bool condition, an int32 "
      "scalar (nonzero is true) and a non-scalar one (non-empty is true).")
def _():
    three, one = f32(3.0).reshape(()), f32(1.0).reshape(())
    library(
        function("times3", [("x", F)], [("y", F)], [("k", "Const", [], None, three),
                                                    ("m", "Mul", ["x", "k:output:0"], F, None)], {"y": "m:z:0"}),
        function("minus1", [("x", F)], [("y", F)], [("k", "Const", [], None, one),
                                                    ("s", "Sub", ["x", "k:output:0"], F, None)], {"y": "s:z:0"}))
    x = f32(2.0, -0.5)
    px = feed("x", x)
    for name, op, cond in (("if_true", "If", tf.constant(True)), ("if_false", "StatelessIf", tf.constant(False)),
                           ("if_int0", "StatelessIf", tf.constant(0)), ("if_int7", "If", tf.constant(7)),
                           ("if_empty", "StatelessIf", tf.constant(np.zeros((0,), np.float32))),
                           ("if_vector", "StatelessIf", tf.constant([0, 0]))):
        build(op, [cond, [px]], name=name, attrs={"Tcond": cond.dtype, "Tin": (F,), "Tout": (F,),
                                                  "then_branch": func("times3"), "else_branch": func("minus1")})
    times3, minus1 = x * np.float32(3), x - np.float32(1)
    return {"x": x}, {"if_true:0": times3, "if_false:0": minus1, "if_int0:0": minus1, "if_int7:0": times3,
                      "if_empty:0": minus1, "if_vector:0": times3}


@case("while", "While and StatelessWhile: (i, x) -> (i + 1, x * 2) while i < n; n = 3 and n = 0 (no iteration).")
def _():
    library(
        function("cond", [("i", I), ("x", F), ("n", I)], [("keep", tf.bool)],
                 [("less", "Less", ["i", "n"], I, None)], {"keep": "less:z:0"}),
        function("body", [("i", I), ("x", F), ("n", I)], [("i2", I), ("x2", F), ("n2", I)], [
            ("one", "Const", [], None, np.array(1, np.int32)),
            ("two", "Const", [], None, np.array(2, np.float32)),
            ("inc", "AddV2", ["i", "one:output:0"], I, None),
            ("dbl", "Mul", ["x", "two:output:0"], F, None),
            ("same", "Identity", ["n"], I, None),
        ], {"i2": "inc:z:0", "x2": "dbl:z:0", "n2": "same:output:0"}))
    x = f32(1.5, -0.25)
    px = feed("x", x)
    zero = tf.constant(0)
    attrs = {"T": (I, F, I), "cond": func("cond"), "body": func("body")}
    build("While", [[zero, px, tf.constant(3)]], name="loop", attrs=attrs)
    build("StatelessWhile", [[zero, px, tf.constant(0)]], name="no_loop", attrs=attrs)
    return {"x": x}, {"loop:0": np.int32(3), "loop:1": x * np.float32(8), "loop:2": np.int32(3),
                      "no_loop:0": np.int32(0), "no_loop:1": x, "no_loop:2": np.int32(0)}
