"""Functional control flow: PartitionedCall, StatefulPartitionedCall, If, StatelessIf, While, StatelessWhile.

Each calls functions of the GraphDef's library (GraphDef.library, graphdef/wire/functions.py)
named by a `func` attr. The kernels know nothing of graphs: the runtime hands them `functions`,
an object whose `call(name, args, node)` runs one function body and returns its results
(graphdef/client/functions.py for the Session). A call nested in a called function counts
towards a depth limit there, and a While loop stops with an error after
GRAPHDEF_MAX_WHILE_ITERATIONS iterations (default 10**6): a hostile file must not hang a
runtime. TensorFlow bounds neither.
"""

import os

import numpy as np

from graphdef.framework.errors import InvalidArgumentError
from graphdef.framework.numerics import EXACT
from graphdef.framework.shapes import TensorShape
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, define

MAX_WHILE_ITERATIONS_ENV = "GRAPHDEF_MAX_WHILE_ITERATIONS"
DEFAULT_MAX_WHILE_ITERATIONS = 1_000_000

# op type -> (func attr, the list(type) attr its arguments follow, the one its results follow);
# None: the function returns one tensor read as a condition. The loader checks every call
# against the called function's signature with this table, before anything runs.
CALLS = {
    "PartitionedCall": (("f", "Tin", "Tout"),),
    "StatefulPartitionedCall": (("f", "Tin", "Tout"),),
    "If": (("then_branch", "Tin", "Tout"), ("else_branch", "Tin", "Tout")),
    "StatelessIf": (("then_branch", "Tin", "Tout"), ("else_branch", "Tin", "Tout")),
    "While": (("cond", "T", None), ("body", "T", "T")),
    "StatelessWhile": (("cond", "T", None), ("body", "T", "T")),
}


def max_while_iterations():
    text = os.environ.get(MAX_WHILE_ITERATIONS_ENV)
    try:
        return int(text) if text else DEFAULT_MAX_WHILE_ITERATIONS
    except ValueError:
        raise InvalidArgumentError(f"{MAX_WHILE_ITERATIONS_ENV}={text!r} is not a whole number") from None


def func_name(value):
    """A func attr's function name: a NameAttrList read from a file, or a name given in Python."""
    if isinstance(value, str):
        return value
    name = getattr(value, "name", None)  # a NameAttrList; a file may hold another kind of value
    if not isinstance(name, str):
        raise ValueError(f"{value!r} is not a function name")
    return name


def truth(value):
    """TensorFlow's reading of a condition: a scalar is true when nonzero, any other tensor when not empty."""
    value = np.asarray(value)
    if value.ndim == 0:
        return bool(value)
    return value.size > 0


def _results(values):
    """A kernel returns its one output bare, and several as a tuple (how the Session stores them)."""
    return values[0] if len(values) == 1 else tuple(values)


def _unknown_shapes(attr):
    def infer(ctx):
        return [TensorShape(None)] * len(ctx.attrs[attr])
    return infer


def _declared_shapes(attr):
    """output_shapes when the node lists one per output (TF writes them), else unknown shapes."""
    def infer(ctx):
        shapes = ctx.attrs.get("output_shapes") or ()
        count = len(ctx.attrs[attr])
        if len(shapes) == count:
            return [TensorShape(s) for s in shapes]
        return [TensorShape(None)] * count
    return infer


def _call(*args, f, functions, node):
    return _results(functions.call(f, args, node))


def _if(cond, *args, then_branch, else_branch, functions, node):
    branch = then_branch if truth(cond) else else_branch
    return _results(functions.call(branch, args, node))


def _while(*args, cond, body, functions, node):
    limit = max_while_iterations()
    values = tuple(args)
    for _ in range(limit):
        (keep_going,) = functions.call(cond, values, node)
        if not truth(keep_going):
            return _results(values)
        values = tuple(functions.call(body, values, node))
    raise InvalidArgumentError(f"the loop ran {limit} iterations and its condition is still true; set "
                               f"{MAX_WHILE_ITERATIONS_ENV} to allow more")


_CALL_ATTRS = {"Tin": Attr("list(type)"), "Tout": Attr("list(type)"), "f": Attr("func"),
               "config": Attr("string", ""), "config_proto": Attr("string", ""),
               "executor_type": Attr("string", "")}
_IF_ATTRS = {"Tcond": Attr("type"), "Tin": Attr("list(type)"), "Tout": Attr("list(type)"),
             "then_branch": Attr("func"), "else_branch": Attr("func"), "output_shapes": Attr("list(shape)", ())}
_WHILE_ATTRS = {"T": Attr("list(type)"), "cond": Attr("func"), "body": Attr("func"),
                "output_shapes": Attr("list(shape)", ()), "parallel_iterations": Attr("int", 10)}

for _type, _stateful in (("PartitionedCall", False), ("StatefulPartitionedCall", True)):
    define(_type, "args: Tin -> output: Tout",
           doc="Calls the library function f on args and returns its results.",
           attrs=_CALL_ATTRS, infer=_unknown_shapes("Tout"), kernel=_call, grad=NOT_DIFFERENTIABLE,
           numerics=EXACT, stateful=_stateful)

for _type, _stateful in (("If", True), ("StatelessIf", False)):
    define(_type, "cond: Tcond, input: Tin -> output: Tout",
           doc="Calls then_branch on input when cond holds (a nonzero scalar, or a non-empty tensor), "
               "else else_branch.",
           attrs=_IF_ATTRS, infer=_declared_shapes("Tout"), kernel=_if, grad=NOT_DIFFERENTIABLE,
           numerics=EXACT, stateful=_stateful)

for _type, _stateful in (("While", True), ("StatelessWhile", False)):
    define(_type, "input: T -> output: T",
           doc="Replaces input by body(input) while cond(input) holds; returns the last values.",
           attrs=_WHILE_ATTRS, infer=_declared_shapes("T"), kernel=_while, grad=NOT_DIFFERENTIABLE,
           numerics=EXACT, stateful=_stateful)
