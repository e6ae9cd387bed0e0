"""How an op is declared, checked and built.

An op is declared once with `define(...)`: its TF type name, a signature in TF's own
notation ("x: T, y: T -> z: T"), attrs with defaults, a shape-inference function, a
numpy kernel and a gradient slot. The declaration is checked at import time. `build`
turns Python values and Tensors into a checked node of the default graph; `create`
does the same for a node read from a GraphDef, so both paths share every check.
"""

import functools
import inspect
import re
import sys
from dataclasses import dataclass, field, replace

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.numerics import Numerics, combined, tensor_ulps
from graphdef.framework.graph import Tensor, get_default_graph
from graphdef.framework.shapes import TensorShape, broadcast, show

REQUIRED = object()           # an attr with no default
NOT_DIFFERENTIABLE = "not differentiable"

ATTR_KINDS = ("type", "int", "float", "bool", "string", "shape", "tensor",
              "list(int)", "list(type)", "list(shape)", "list(float)", "list(string)", "func")

# keyword-only kernel parameters that are not attrs but come from the runtime
# (functions: what runs the GraphDef library's functions, for If, While and the calls;
# out: an array a caller may pass for the result, which the kernel writes into when it has the
# first input's shape and dtype; the Session never passes one)
RUNTIME_PARAMS = frozenset(("state", "node", "ref", "refs", "functions", "out"))
# those of them that tie an op to the session's state (variables, resources, functions)
STATE_PARAMS = frozenset(("state", "ref", "refs", "functions"))
# the most outputs one node may declare through a count attr (Split's num_split, Unpack's num):
# a file's num_split=10**12 must be refused, not turned into 10**12 Tensor objects (graphrun-cc's limit)
MAX_LISTED_OUTPUTS = 1 << 20
MAX_RANK = 64  # numpy's limit on a tensor's dims


@dataclass(frozen=True)
class Attr:
    kind: str
    default: object = REQUIRED
    allowed: frozenset = None  # for "type" attrs: the DTypes accepted
    minimum: int = None        # count attrs: the least count (define() sets 1 for inputs, 0 for outputs);
                               # list(type) attrs: the fewest dtypes listed


@dataclass(frozen=True)
class Arg:
    name: str
    type_attr: str = None      # the attr giving this arg's dtype ...
    dtype: object = None       # ... or a fixed DType
    number_attr: str = None    # "N*T": a list of N tensors
    is_ref: bool = False
    type_list: bool = False    # T is a list(type) attr: one tensor per listed dtype (IdentityN)


@dataclass
class OpDef:
    type: str
    doc: str
    inputs: tuple
    outputs: tuple
    attrs: dict
    infer: object
    kernel: object
    grad: object = None        # filled in by the gradients issue; NOT_DIFFERENTIABLE where none exists
    numerics: Numerics = None  # how exactly the result is specified (graphdef.framework.numerics)
    stateful: bool = False
    kernel_params: tuple = field(default=())
    module: str = None         # the module whose define() declared it: docs/ops.md's family

    def num_outputs(self, attrs):
        n = 0
        for arg in self.outputs:
            n += len(attrs[arg.type_attr]) if arg.type_list else attrs[arg.number_attr] if arg.number_attr else 1
        return n

    def output_dtypes(self, attrs):
        out = []
        for arg in self.outputs:
            if arg.type_list:
                out.extend(attrs[arg.type_attr])
                continue
            dtype = arg.dtype or attrs[arg.type_attr]
            out.extend([dtype] * (attrs[arg.number_attr] if arg.number_attr else 1))
        return out

    # cached: create() asks for both on every node it adds
    @functools.cached_property
    def ref_inputs(self):
        return tuple(i for i, a in enumerate(self.inputs) if a.is_ref)

    @functools.cached_property
    def counted_args(self):
        """(arg, is_input) of each input and output whose length a count attr (N, num_split) gives."""
        return tuple((a, is_input) for args, is_input in ((self.inputs, True), (self.outputs, False))
                     for a in args if a.number_attr)


REGISTRY = {}

_ARG = re.compile(r"^(\w+):\s*(?:(Ref)\((\w+)\)|(?:(\w+)\*)?(\w+))$")


def _parse_args(text):
    args = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        m = _ARG.match(part)
        if not m:
            raise ValueError(f"bad argument spec {part!r}")
        name, ref, ref_type, number, type_name = m.groups()
        type_name = ref_type or type_name
        try:
            fixed = dtypes.as_dtype(type_name) if type_name[0].islower() else None
        except TypeError:
            fixed = None
        args.append(Arg(name, type_attr=None if fixed else type_name, dtype=fixed,
                        number_attr=number, is_ref=bool(ref)))
    return tuple(args)


def define(type_name, signature, *, doc, infer, kernel, numerics, attrs=None, grad=None, stateful=False):
    """Declares an op; every mistake in the declaration fails here, at import."""
    if type_name in REGISTRY:
        raise ValueError(f"op {type_name} is defined twice")
    if not isinstance(numerics, Numerics):
        raise ValueError(f"{type_name}: numerics must say how exact the result is (graphdef.framework.numerics), "
                         f"got {numerics!r}")
    ins, _, outs = signature.partition("->")
    opdef = OpDef(type_name, doc, _parse_args(ins), _parse_args(outs), dict(attrs or {}),
                  infer, kernel, grad, numerics, stateful)
    opdef.module = sys._getframe(1).f_globals.get("__name__")
    for name, attr in opdef.attrs.items():
        if attr.kind not in ATTR_KINDS:
            raise ValueError(f"{type_name}: attr {name} has unknown kind {attr.kind!r}")
    for i, arg in enumerate(opdef.inputs + opdef.outputs):
        if arg.type_attr and not arg.number_attr and opdef.attrs.get(arg.type_attr, Attr(None)).kind == "list(type)":
            arg = replace(arg, type_list=True)
            if i < len(opdef.inputs):
                opdef.inputs = opdef.inputs[:i] + (arg,) + opdef.inputs[i + 1:]
            else:
                j = i - len(opdef.inputs)
                opdef.outputs = opdef.outputs[:j] + (arg,) + opdef.outputs[j + 1:]
            continue
        for attr_name, kind in ((arg.type_attr, "type"), (arg.number_attr, "int")):
            if attr_name and opdef.attrs.get(attr_name, Attr(None)).kind != kind:
                raise ValueError(f"{type_name}: arg {arg.name} needs a {kind} attr {attr_name}")
        count = opdef.attrs.get(arg.number_attr)
        if count is not None and count.minimum is None:  # TF's op defs: N >= 1 inputs, any number of outputs
            opdef.attrs[arg.number_attr] = replace(count, minimum=1 if i < len(opdef.inputs) else 0)
    if not isinstance(kernel, np.ufunc):  # a ufunc's keywords (out=, where=) are not attrs
        params = inspect.signature(kernel).parameters.values()
        opdef.kernel_params = tuple(p.name for p in params if p.kind is p.KEYWORD_ONLY)
    for name in opdef.kernel_params:
        if name not in opdef.attrs and name not in RUNTIME_PARAMS:
            raise ValueError(f"{type_name}: kernel parameter {name} is neither an attr nor a runtime value")
    if not doc:
        raise ValueError(f"{type_name}: every op needs a one-line doc")
    REGISTRY[type_name] = opdef
    return opdef


def lookup(type_name):
    try:
        return REGISTRY[type_name]
    except KeyError:
        raise KeyError(f"no op named {type_name}") from None


# -- building -------------------------------------------------------------------------

class InferenceContext:
    """What shape inference sees: the input Tensors, the attrs, and the node name for errors."""

    __slots__ = ("op_type", "name", "inputs", "attrs")

    def __init__(self, op_type, name, inputs, attrs):
        self.op_type, self.name, self.inputs, self.attrs = op_type, name, inputs, attrs

    def shape(self, i):
        return self.inputs[i].shape

    def error(self, message):
        return ValueError(f"{self.op_type} '{self.name}': {message}")


def constant_value(tensor):
    """The value of a tensor known at build time (a Const's output), else None."""
    if tensor.op.type == "Const":
        return tensor.op.attrs["value"]
    return None


def python_to_numpy(value, dtype=None):
    """Python or numpy data -> ndarray, with TF's defaults (int -> int32, float -> float32)."""
    if dtype is not None and dtypes.as_dtype(dtype) is dtypes.string:
        return dtypes.string_array(value)
    if dtype is None and _holds_strings(value):
        return dtypes.string_array(value)
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
        arr = np.asarray(value)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"cannot convert {value!r} to {dtype.name}")
        if arr.dtype != dtype.np:
            out = arr.astype(dtype.np)
            lossless = (arr.dtype.kind == "f" and dtype.is_floating) or np.array_equal(
                out.astype(arr.dtype), arr)
            if not lossless:
                raise TypeError(f"cannot convert {value!r} to {dtype.name} without changing its value")
            arr = out
        return arr
    arr = np.asarray(value)
    if not isinstance(value, (np.ndarray, np.generic)):
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif arr.dtype == np.int64 and (arr.size == 0 or (arr.min() >= -2**31 and arr.max() < 2**31)):
            arr = arr.astype(np.int32)
    dtypes.as_dtype(arr.dtype)  # raises for types the graph cannot carry
    return arr


def _holds_strings(value):
    """Whether `value` is str/bytes data (a string tensor's value) rather than numbers."""
    if isinstance(value, (str, bytes)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "SUO"
    if isinstance(value, (list, tuple)):
        while isinstance(value, (list, tuple)) and value:
            value = value[0]
        return isinstance(value, (str, bytes))
    return isinstance(value, np.generic) and value.dtype.kind in "SU"


def convert_to_tensor(value, dtype=None, name=None):
    """A Tensor as is (its dtype must match), anything with `_to_tensor`, or a new Const."""
    if hasattr(value, "_to_tensor"):
        value = value._to_tensor()
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype is not dtypes.as_dtype(dtype):
            raise TypeError(f"tensor '{value.name}' is {value.dtype.name}, expected {dtypes.as_dtype(dtype).name}")
        return value
    from graphdef.ops.array import constant  # array imports this module's names: a real cycle
    return constant(value, dtype=dtype, name=name or "Const")


def build(op_type, inputs, *, name=None, default_name=None, attrs=None, control_inputs=()):
    """Adds an op of `op_type` to the default graph and returns its Operation."""
    opdef = lookup(op_type)
    graph = get_default_graph()
    attrs = dict(attrs or {})
    node_name = graph.op_name(name, default_name or op_type)
    # plain values become Consts named after their argument inside the op's scope (add/y), as in TF
    with graph.name_scope(node_name + "/"):
        flat = _convert_inputs(opdef, list(inputs), attrs, node_name)
    if graph is not get_default_graph():  # converting inputs must not switch graphs
        raise RuntimeError("the default graph changed while building an op")
    for t in flat:
        if t.graph is not graph:
            raise ValueError(f"{op_type}: input '{t.name}' is from another graph; "
                             "build every op of a model inside one `with graph.as_default()`")
    context = graph._control_flow_context  # a cond branch or loop body (ops/control_flow_api.py)
    if context is not None:
        flat, control_inputs = context.adjust(flat, control_inputs)
    op = create(graph, opdef, node_name, flat, attrs, control_inputs)
    if context is not None:
        graph._op_context[op] = context
    return op


def builder(type_name, default_name, arity):
    """The public builder of a single-output op whose inputs are all tensors: f(x[, y], name=None)."""
    def build_op(*inputs, name=None):
        if len(inputs) != arity:
            raise TypeError(f"{default_name.lower()}() takes {arity} tensors, got {len(inputs)}")
        return build(type_name, list(inputs), name=name, default_name=default_name).outputs[0]
    build_op.__name__ = default_name.lower()
    build_op.__doc__ = lookup(type_name).doc
    return build_op


def raw_op(op_type, *inputs, name=None, **attrs):
    """Any registered op by its TF type name: raw_op("Add", x, y) (like tf.raw_ops)."""
    op = build(op_type, list(inputs), name=name, attrs=attrs)
    return op.outputs[0] if len(op.outputs) == 1 else op.outputs


def _convert_inputs(opdef, inputs, attrs, label):
    if len(inputs) != len(opdef.inputs):
        raise TypeError(f"{opdef.type} takes {len(opdef.inputs)} inputs, got {len(inputs)}")
    # pass 1: dtypes fixed by tensors already in the graph (or by explicit attrs)
    position = 0  # of the first item of `value` among the node's inputs
    for j, (arg, value) in enumerate(zip(opdef.inputs, inputs)):
        if arg.number_attr or arg.type_list:
            inputs[j] = items = list(value)  # once: an iterator would be empty in pass 2
        else:
            items = [value]
        position += len(items)
        if not arg.type_attr or arg.type_list:
            continue
        for k, item in enumerate(items, position - len(items)):
            if hasattr(item, "_to_tensor"):
                item = item._to_tensor()
            if isinstance(item, Tensor):
                seen = attrs.get(arg.type_attr)
                if seen is None:
                    attrs[arg.type_attr] = item.dtype
                elif seen is not item.dtype:  # a model file's words, and the fix a builder has
                    raise TypeError(f"{opdef.type} '{label}': input {k} ('{arg.name}') is {item.dtype.name} from "
                                    f"'{item.name}' but the node expects {seen.name} (attr {arg.type_attr}); "
                                    "cast one side with tf.cast")
    # an attr's default dtype is used for plain values only if every one of them fits it,
    # as TF prefers the default but infers from the values otherwise (Range(1.0, 2.0, 0.25))
    defaults = {}
    for arg, value in zip(opdef.inputs, inputs):
        default = _default_attr_dtype(opdef, arg)
        if arg.type_attr and attrs.get(arg.type_attr) is None and default is not None:
            items = value if arg.number_attr else [value]
            try:
                for item in items:
                    python_to_numpy(item, default)
                defaults.setdefault(arg.type_attr, default)
            except (TypeError, ValueError):
                defaults[arg.type_attr] = None
    # pass 2: everything else becomes a Const of the dtype its arg needs
    flat = []
    for arg, value in zip(opdef.inputs, inputs):
        if arg.type_list:  # each tensor keeps its own dtype; the list attr records them
            listed = attrs.get(arg.type_attr)
            items = list(value)
            if listed is not None and len(listed) != len(items):
                raise TypeError(f"{opdef.type} '{label}': {arg.type_attr} lists {len(listed)} dtypes "
                                f"for {len(items)} inputs")
            tensors = [convert_to_tensor(v, dtype=None if listed is None else listed[k])
                       for k, v in enumerate(items)]
            attrs[arg.type_attr] = tuple(t.dtype for t in tensors)
            flat.extend(tensors)
            continue
        if arg.number_attr:
            value = list(value)
            attrs.setdefault(arg.number_attr, len(value))
            items = value
        else:
            items = [value]
        start = len(flat)
        for item in items:
            dtype = arg.dtype or attrs.get(arg.type_attr) or defaults.get(arg.type_attr)
            t = convert_to_tensor(item, dtype=dtype,
                                  name=f"{arg.name}_{len(flat) - start}" if arg.number_attr else arg.name)
            if arg.type_attr and attrs.get(arg.type_attr) is None:
                attrs[arg.type_attr] = t.dtype
            flat.append(t)
    return flat


def _default_attr_dtype(opdef, arg):
    attr = opdef.attrs.get(arg.type_attr)
    if attr is not None and attr.default is not REQUIRED:
        return attr.default
    return None


def create(graph, opdef, name, inputs, attrs, control_inputs=()):
    """Checks attrs and input dtypes, infers output shapes, and adds the node to `graph`."""
    attrs = dict(attrs)
    for attr_name, attr in opdef.attrs.items():
        value = attrs.get(attr_name)
        if value is None:
            if attr.default is REQUIRED:
                raise ValueError(f"{opdef.type} '{name}': missing attr '{attr_name}'")
            attrs[attr_name] = value = attr.default
        kind = attr.kind
        if kind == "type":
            attrs[attr_name] = dtype = value if type(value) is dtypes.DType else dtypes.as_dtype(value)
            if attr.allowed is not None and dtype not in attr.allowed:
                raise TypeError(f"{opdef.type} '{name}': attr '{attr_name}' is {dtype.name}; "
                                f"{opdef.type} accepts {dtype_list(attr.allowed)}")
        elif kind == "shape":
            attrs[attr_name] = TensorShape(value)
        elif kind == "list(type)":
            attrs[attr_name] = listed = tuple(dtypes.as_dtype(d) for d in value)
            if attr.minimum is not None and len(listed) < attr.minimum:
                raise ValueError(f"{opdef.type} '{name}': attr '{attr_name}' lists {len(listed)} types; "
                                 f"{opdef.type} needs at least {attr.minimum}")
    if opdef.counted_args:
        _check_counts(opdef, name, inputs, attrs)
    _check_input_dtypes(opdef, name, inputs, attrs)
    for i in opdef.ref_inputs:
        if inputs[i].op.type != "VariableV2":
            raise TypeError(f"{opdef.type} '{name}': input {i} ('{opdef.inputs[i].name}') must name a variable "
                            f"node directly, not node '{inputs[i].op.name}' ({inputs[i].op.type})")
    ctx = InferenceContext(opdef.type, name, inputs, attrs)
    shapes = opdef.infer(ctx)
    out_dtypes = opdef.output_dtypes(attrs)
    if len(shapes) != len(out_dtypes):
        raise AssertionError(f"{opdef.type}: inference gave {len(shapes)} shapes for {len(out_dtypes)} outputs")
    specs = [(d, TensorShape(s)) for d, s in zip(out_dtypes, shapes)]
    control = []
    for c in control_inputs:
        c = getattr(c, "op", c)
        if c not in control:
            control.append(c)
    return graph.add_op(name, opdef, inputs, attrs, specs, control)


# The words below are graphrun-cc's (runner/graph: kernel.cc, graph_validation.cc), so that both
# runtimes refuse a model file in the same line; a building call names the op first, as TF does.

def dtype_list(allowed):
    """The dtypes an attr accepts, as graphrun-cc lists them: floats, signed, unsigned, then the rest,
    narrower first."""
    def rank(d):
        group = 0 if d.is_floating else 1 if d.is_integer and not d.is_unsigned else 2 if d.is_unsigned else 3
        return group, d.np.itemsize, d.name
    return ", ".join(d.name for d in sorted(allowed, key=rank))


def _check_counts(opdef, name, inputs, attrs):
    """Count attrs (N, num_split, num) must be whole numbers that fit the inputs and a sane output list."""
    for arg, is_input in opdef.counted_args:
        key = arg.number_attr
        n = attrs[key]
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"{opdef.type} '{name}': attr '{key}' must be an int, got {n!r}")
        least = opdef.attrs[key].minimum
        if n < least:
            raise ValueError(f"{opdef.type} '{name}': attr '{key}' is {n}; {opdef.type} needs at least {least}")
        if not is_input and n > MAX_LISTED_OUTPUTS:
            raise ValueError(f"{opdef.type} '{name}': attr '{key}' asks for {n} outputs; "
                             f"graphdef allows at most {MAX_LISTED_OUTPUTS}")
        if is_input and n > len(inputs):  # before anything builds a list of n dtypes
            _check_input_count(opdef, name, inputs, attrs)


def _check_input_count(opdef, name, inputs, attrs):
    expected = sum(len(attrs[a.type_attr]) if a.type_list else attrs[a.number_attr] if a.number_attr else 1
                   for a in opdef.inputs)
    got = len(inputs)
    if got != expected:
        raise ValueError(f"{opdef.type} '{name}': has {got} data input{'' if got == 1 else 's'} "
                         f"but {opdef.type} takes {expected}")


def _check_input_dtypes(opdef, name, inputs, attrs):
    _check_input_count(opdef, name, inputs, attrs)
    i = 0
    for arg in opdef.inputs:
        if arg.type_list:
            expected_each = attrs[arg.type_attr]
        else:
            expected_each = [arg.dtype or attrs[arg.type_attr]] * (attrs[arg.number_attr] if arg.number_attr else 1)
        for expected in expected_each:
            t = inputs[i]
            if t.dtype is not expected:
                raise TypeError(f"{opdef.type} '{name}': input {i} ('{arg.name}') is {t.dtype.name} from "
                                f"'{t.name}' but the node expects {expected.name}"
                                f"{f' (attr {arg.type_attr})' if arg.type_attr else ''}")
            i += 1


# -- shape inference helpers shared by the op families --------------------------------

def same_as_input(index=0):
    def infer(ctx):
        return [ctx.shape(index)]
    return infer


def infer_broadcast(ctx):
    a, b = ctx.shape(0), ctx.shape(1)
    out = _broadcast(a, b)
    if out is None:
        raise ctx.error(f"shapes {show(a)} and {show(b)} cannot be broadcast together")
    return [out]


def _broadcast(a, b):
    return broadcast(a, b)


def check_dims_vector(ctx, index, what, per_dim=1):
    """Refuses an input holding `per_dim` entries per dim of a shape (a shape, multiples, begin,
    paddings) whose length, declared or constant, is past MAX_RANK: a file's Placeholder of
    shape [2^31] costs nothing to declare, yet inference would build a 2^31-entry shape."""
    s = ctx.shape(index)
    n = s.dims[0] if s.ndims else None
    value = constant_value(ctx.inputs[index])
    if value is not None:
        n = max(n or 0, np.size(value) // per_dim)
    if n is not None and n > MAX_RANK:
        raise ctx.error(f"{what} has {n} entries; a tensor has at most {MAX_RANK} dims")


def check_dims_value(value, what="shape"):
    """The same rule for a kernel's fed value: refused before it is turned into a tuple of dims."""
    if np.size(value) > MAX_RANK:
        raise ValueError(f"{what} has {np.size(value)} entries; a tensor has at most {MAX_RANK} dims")


def scalar_shape(ctx):
    return [TensorShape(())]


# -- the numerics policy of a result ------------------------------------------------------

# what a GraphDef op unknown to the registry is assumed to cost: as much as a convolution
_UNKNOWN_OP = tensor_ulps(8)


def numerics_of(graph_def, tensor_name):
    """The policy of one tensor of a GraphDef: every op on its path to the inputs, combined."""
    nodes = {node.name: node for node in graph_def.node}
    functions = {f.signature.name: f for f in graph_def.library.function}
    seen, stack, ops = set(), [tensor_name.split(":")[0].lstrip("^")], []
    called, pending = set(), []
    while stack:
        name = stack.pop()
        if name in seen or name not in nodes:
            continue
        seen.add(name)
        node = nodes[name]
        ops.append(REGISTRY[node.op].numerics if node.op in REGISTRY else _UNKNOWN_OP)
        stack.extend(i.split(":")[0].lstrip("^") for i in node.input)
        pending.extend(node.attr.values())
    # a called function adds every op of its body, once (a loop's iterations are not counted)
    while pending:
        value = pending.pop()
        if value.WhichOneof("value") != "func" or value.func.name in called or value.func.name not in functions:
            continue
        called.add(value.func.name)
        for node in functions[value.func.name].node_def:
            ops.append(REGISTRY[node.op].numerics if node.op in REGISTRY else _UNKNOWN_OP)
            pending.extend(node.attr.values())
    return combined(ops)
