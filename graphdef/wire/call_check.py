"""Every call a loaded graph makes, checked against the function it names without instantiating it.

At load a call is checked as TensorFlow's importer checks it: the function exists; its body's
nodes have op types graphdef knows and dtypes it carries; every input, result and control output
names something of the body; its "$attr" placeholders are set; and the dtypes the calling node
passes and expects are those the signature declares. Then the calls inside the body are checked
the same way, each function once per set of attr values. Instantiating a body (a Graph of its
own, each node's attrs and shapes checked) waits for the first run that calls it
(FunctionLibrary.body), as TensorFlow instantiates a function on its first call: a file of 10^5
small functions then loads in a few seconds instead of instantiating every one.
"""

from types import SimpleNamespace

from graphdef._proto import graph_pb2
from graphdef.framework import dtypes
from graphdef.ops import REGISTRY
from graphdef.ops.registry import REQUIRED, dtype_list
from graphdef.ops.registry import _check_counts as check_counts, _check_input_dtypes as check_input_dtypes
from graphdef.ops import unsupported as unsupported_ops
from graphdef.ops.functional import CALLS, func_name
from graphdef.wire.values import attr_from_proto
from graphdef.wire.foreign_dtypes import CARRIED_ENUMS, foreign_dtype
from graphdef.wire.functions import (FunctionError, _arg_dtypes, _fill_placeholders, _output_offsets, _plain_inputs,
                                     call_attrs, results, signature_values)


def defer(graph, ops):
    """Keeps the calls among `ops` for check_deferred_calls instead of checking them now."""
    pending = getattr(graph, "_unchecked_calls", None) or []
    pending.extend(op for op in ops if op.type in CALLS)
    graph._unchecked_calls = pending


def has_deferred_calls(graph):
    return bool(getattr(graph, "_unchecked_calls", None))


def check_deferred_calls(graph):
    """Checks the calls import_graph_def(defer_calls=True) left; FunctionError names the first bad
    one, prefixed with the file it came from, as the load would have."""
    pending = getattr(graph, "_unchecked_calls", None)
    if not pending:
        return
    graph._unchecked_calls = None
    try:
        check_calls(graph, pending)
    except FunctionError as e:
        source = getattr(graph, "_loaded_from", None)
        raise FunctionError(f"{source}: {e}" if source else str(e)) from None


class CheckedFunction:
    """What a call of one function (for one set of attr values) is checked against."""

    def __init__(self, name, takes, returns, calls):
        self.name, self.takes, self.returns, self.calls = name, takes, returns, calls


def check_calls(graph, ops):
    """Checks every call the `ops` make, and the calls inside the functions they call; iterative, so a
    function that calls itself is no problem. FunctionError names the first bad call."""
    pending = [_Call(op.name, op.type, op.attrs) for op in ops if op.type in CALLS]
    seen = set()
    while pending:
        call = pending.pop()
        for attr, ins_attr, outs_attr in CALLS[call.op_type]:
            func = call.func(attr)
            name = func_name(func)
            if graph.functions is None:
                raise FunctionError(f"node '{call.name}' ({call.op_type}): attr '{attr}' calls function "
                                    f"'{name}', but the graph has no function library")
            try:
                checked, key = checked_function(graph.functions, name, call_attrs(func))
            except FunctionError as e:
                if str(e).startswith(f"function '{name}': "):  # about the body, which it names: as graphrun-cc
                    raise
                raise FunctionError(f"node '{call.name}' ({call.op_type}): attr '{attr}': {e}") from None
            _check_signature(call, attr, checked, call.dtypes(ins_attr), call.dtypes(outs_attr), outs_attr is None)
            if key not in seen:
                seen.add(key)
                pending.extend(checked.calls)


def checked_function(library, name, attrs):
    """(CheckedFunction, its cache key) for function `name` called with `attrs`, checked once."""
    fdef = library.defs.get(name)
    if fdef is None:
        raise FunctionError(f"the graph's library has no function '{name}'")
    values = signature_values(fdef, attrs or {})
    key = (name, tuple(sorted((k, v.SerializeToString(deterministic=True)) for k, v in values.items())))
    found = library.checked.get(key)
    if found is None:
        try:
            found = _check_body(fdef, values)
        except (TypeError, ValueError) as e:
            if isinstance(e, FunctionError):
                raise
            raise FunctionError(f"function '{name}': {e}") from None
        library.checked[key] = found
    return found, key


class _Call:
    """A loaded Operation that calls functions: its attrs are converted values."""

    def __init__(self, name, op_type, attrs):
        self.name, self.op_type, self.attrs = name, op_type, attrs

    def func(self, attr):
        """The func attr `attr` (a NameAttrList, or a name given in Python)."""
        try:
            value = self.attrs[attr]
            func_name(value)
            return value
        except (KeyError, ValueError):
            raise FunctionError(f"node '{self.name}' ({self.op_type}): attr '{attr}' must name a function of "
                                "the graph's library") from None

    def dtypes(self, attr):
        """The dtypes a list(type) attr holds; None when there is no such attr."""
        value = self.attrs.get(attr) if attr else None
        return None if value is None else tuple(value)


class _BodyCall(_Call):
    """A NodeDef of a function body that calls functions: its attrs are AttrValues, not yet checked
    (a malformed one is refused when the body is instantiated)."""

    def func(self, attr):
        value = self.attrs.get(attr)
        if value is None or value.WhichOneof("value") != "func":
            raise FunctionError(f"node '{self.name}' ({self.op_type}): attr '{attr}' must name a function of "
                                "the graph's library")
        return value.func

    def dtypes(self, attr):
        value = self.attrs.get(attr) if attr else None
        if value is None or value.WhichOneof("value") != "list":
            return None
        try:
            return tuple(dtypes.as_dtype(e) for e in value.list.type)
        except TypeError:
            return None


def _check_signature(call, attr, checked, in_dtypes, out_dtypes, condition):
    where = f"node '{call.name}' ({call.op_type}): attr '{attr}' calls '{checked.name}'"
    if in_dtypes is not None and in_dtypes != checked.takes:
        raise FunctionError(f"{where}, which takes ({_names(checked.takes)}) but the node passes "
                            f"({_names(in_dtypes)})")
    if condition:
        if len(checked.returns) != 1:
            raise FunctionError(f"{where}, a condition, which must return one tensor but returns "
                                f"{len(checked.returns)}")
    elif out_dtypes is not None and out_dtypes != checked.returns:
        raise FunctionError(f"{where}, which returns ({_names(checked.returns)}) but the node expects "
                            f"({_names(out_dtypes)})")


def _names(types):
    return ", ".join(t.name for t in types)


def _check_body(fdef, values):
    """The body of `fdef` for signature attr `values`, checked as plain_body and the importer would
    refuse it, without building it."""
    sig = fdef.signature
    arg_nodes, takes = {}, []
    for arg in sig.input_arg:
        types = _arg_dtypes(fdef, arg, values, "argument")
        listed = bool(arg.number_attr or arg.type_list_attr)
        arg_nodes[arg.name] = [f"{arg.name}/_{k}" for k in range(len(types))] if listed else [arg.name]
        takes.extend(types)
    filled = [_filled(node, values, sig.name) for node in fdef.node_def]
    nodes = [node for node, _ in filled]
    offsets = {node.name: _output_offsets(node) for node in nodes}
    inputs = {node.name: [name for text in node.input
                          for name in _plain_inputs(text, offsets, arg_nodes, f"node '{node.name}'")]
              for node in nodes}
    _, returns, _ = results(fdef, values, offsets, arg_nodes)
    cannot = [c for c in (_unsupported(node, foreign) for node, foreign in filled) if c is not None]
    if cannot:
        raise FunctionError(f"function '{sig.name}': {unsupported_ops.describe(cannot)}")
    names = [name for arg in sig.input_arg for name in arg_nodes[arg.name]]
    _check_dtypes(sig.name, nodes, inputs, dict(zip(names, takes)))
    calls = [_BodyCall(node.name, node.op, node.attr) for node in nodes if node.op in CALLS]
    return CheckedFunction(sig.name, tuple(takes), tuple(returns), calls)


class _Typed:
    """A tensor of a body as the registry's dtype checks see it: its name and dtype."""
    __slots__ = ("name", "dtype")

    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype


_TYPED_KINDS = ("type", "list(type)", "int")  # what fixes a node's input and output dtypes


def _check_dtypes(function, nodes, inputs, known):
    """Each body node's input dtypes against those its op and attrs declare, producers first, as the
    importer checks them (shapes are inferred when the body is instantiated). `known` maps the
    argument placeholders' names to their dtypes and gains each node's outputs."""
    by_name = {node.name: node for node in nodes}
    waiting = {node.name: {i.partition(":")[0] for i in inputs[node.name] if not i.startswith("^")} & by_name.keys()
               for node in nodes}
    readers = {}
    for name, producers in waiting.items():
        for producer in producers:
            readers.setdefault(producer, []).append(name)
    ready = [name for name, producers in waiting.items() if not producers]
    while ready:  # a node in a cycle is never ready: instantiating the body refuses it
        name = ready.pop()
        node = by_name[name]
        opdef = REGISTRY[node.op]
        where = f"node '{name}' ({node.op})"
        attrs = {}
        try:
            for key, attr in _typed_attrs(opdef):
                attrs[key] = _typed_value(node, key, attr)
            typed = [_Typed(i if ":" in i else f"{i}:0", known[i]) for i in inputs[name]
                     if not i.startswith("^") and i in known]
            if len(typed) == sum(not i.startswith("^") for i in inputs[name]):
                if opdef.counted_args:
                    check_counts(opdef, name, typed, attrs)
                check_input_dtypes(opdef, name, typed, attrs)
                for k, dtype in enumerate(opdef.output_dtypes(attrs)):
                    known[f"{name}:{k}"] = dtype
        except (TypeError, ValueError) as e:  # the registry's words, which name the op first
            words = str(e).removeprefix(f"{node.op} '{name}': ")
            raise FunctionError(f"function '{function}': {where}: {words}") from None
        for reader in readers.get(name, ()):
            waiting[reader].discard(name)
            if not waiting[reader]:
                ready.append(reader)


_TYPED_ATTRS = {}  # op type -> its attrs that a node must set or that fix its dtypes


def _typed_attrs(opdef):
    found = _TYPED_ATTRS.get(opdef.type)
    if found is None:
        found = _TYPED_ATTRS[opdef.type] = tuple((key, attr) for key, attr in opdef.attrs.items()
                                                  if attr.default is REQUIRED or attr.kind in _TYPED_KINDS)
    return found


def _default(attr):
    if attr.kind == "type" and attr.default is not None and type(attr.default) is not dtypes.DType:
        return dtypes.as_dtype(attr.default)
    if attr.kind == "list(type)" and attr.default is not None:
        return tuple(dtypes.as_dtype(d) for d in attr.default)
    return attr.default


def _typed_value(node, key, attr):
    """A body node's attr that the dtype check reads, as the registry's create would hold it."""
    value = node.attr.get(key)
    if value is None:
        if attr.default is REQUIRED:
            raise ValueError(f"missing attr '{key}'")
        return _default(attr)
    if attr.kind == "type" and value.WhichOneof("value") == "type" and value.type in CARRIED_ENUMS:
        dtype = dtypes.as_dtype(value.type)  # the common case, without attr_from_proto's checks
    elif attr.kind in _TYPED_KINDS:
        dtype = attr_from_proto(attr.kind, value, f"attr '{key}'")
    else:
        return value  # the check reads only that it is there
    if attr.kind == "type" and attr.allowed is not None and dtype not in attr.allowed:
        raise TypeError(f"attr '{key}' is {dtype.name}; {node.op} accepts {dtype_list(attr.allowed)}")
    if attr.kind == "list(type)" and attr.minimum is not None and len(dtype) < attr.minimum:
        raise ValueError(f"attr '{key}' lists {len(dtype)} types; {node.op} needs at least {attr.minimum}")
    return dtype


def _filled(node, values, function):
    """(the node with its "$attr" placeholders set from `values`, the name of a dtype graphdef cannot
    carry that it holds, or None): one pass over the attrs, and a copy only when it has placeholders."""
    placeholders = maybe_foreign = False
    for value in node.attr.values():
        kind = value.WhichOneof("value")
        if kind == "placeholder":
            placeholders = True
        elif kind == "type":
            maybe_foreign = maybe_foreign or value.type not in CARRIED_ENUMS
        elif kind == "tensor":
            maybe_foreign = maybe_foreign or value.tensor.dtype not in CARRIED_ENUMS
        elif kind == "list" and not maybe_foreign:
            maybe_foreign = not CARRIED_ENUMS.issuperset(value.list.type)
    if placeholders:
        copy = graph_pb2.NodeDef()
        copy.CopyFrom(node)
        _fill_placeholders(copy, values, function)
        return copy, foreign_dtype(copy)
    return node, foreign_dtype(node) if maybe_foreign else None


def _unsupported(node, foreign):
    """A stand-in operation for unsupported_ops.describe when graphdef cannot run `node`, else None."""
    if node.op not in REGISTRY:
        opdef = unsupported_ops.unsupported_opdef(node.op, unsupported_ops.MISSING_OP)
    elif foreign:
        opdef = unsupported_ops.unsupported_opdef(node.op, unsupported_ops.FOREIGN_DTYPE, foreign)
    else:
        return None
    return SimpleNamespace(name=node.name, type=node.op, opdef=opdef)
