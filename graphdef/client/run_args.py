"""What both engines share about a Session.run call: fetch structures, feeds and their checks.

These are the Session's semantics, whichever engine runs the plan: a fetch may be a Tensor, an
Operation, a name, or a list/tuple/namedtuple/dict of them; a fed value is converted to the
tensor's dtype only when no value changes; 0-d results come back as numpy scalars and every
array as one the caller owns; the errors name the fetch, feed or placeholder that is wrong.
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.errors import InvalidArgumentError, NotFoundError, UnimplementedError
from graphdef.framework.graph import Operation, Tensor
from graphdef.framework.shapes import show
from graphdef.framework.toposort import toposort
from graphdef.ops import unsupported as unsupported_ops

# -- fetch structures -------------------------------------------------------------------

def structure_key(fetches):
    if isinstance(fetches, (list, tuple)):
        return (type(fetches).__name__,) + tuple(structure_key(f) for f in fetches)
    if isinstance(fetches, dict):
        return ("dict",) + tuple((k, structure_key(v)) for k, v in fetches.items())
    return fetches


def _flatten(fetches, leaves):
    """Appends the leaves of `fetches` to `leaves`; returns a function rebuilding the structure."""
    if isinstance(fetches, (list, tuple)):
        parts = [_flatten(f, leaves) for f in fetches]
        kind = type(fetches)
        if kind is list or kind is tuple:
            return lambda values: kind(p(values) for p in parts)
        return lambda values: kind(*(p(values) for p in parts))  # namedtuple
    if isinstance(fetches, dict):
        parts = {k: _flatten(v, leaves) for k, v in fetches.items()}
        return lambda values: {k: p(values) for k, p in parts.items()}
    index = len(leaves)
    leaves.append(fetches)
    return lambda values: values[index]


def fast_scalar(array):
    """0-d arrays travel as numpy scalars: same dtype and semantics, a fraction of the overhead.
    A string scalar stays an array: its element is a plain `bytes`, which numpy would read back as 'S'."""
    return array[()] if type(array) is np.ndarray and array.ndim == 0 and array.dtype.kind != "O" else array


def result(value):
    if type(value) is np.ndarray:
        if value.ndim == 0:
            return value[()]
        if not value.flags.writeable:  # graph-owned (a Const or a variable's value): hand out a copy
            return value.copy()
    return value


# -- feeds ------------------------------------------------------------------------------

def convert_feed(value, tensor):
    """The fed value as an ndarray of the tensor's dtype; refuses changes of value or shape."""
    dtype = tensor.dtype.np
    if tensor.dtype is dtypes.string:
        arr = _string_feed(value, tensor)
    elif type(value) is np.ndarray and value.dtype == dtype:
        arr = value
    else:
        if hasattr(value, "_to_tensor") or isinstance(value, (Tensor, Operation)):
            raise TypeError(f"Session.run: the value fed to '{tensor.name}' is a graph element ({value!r}); "
                            "feed numbers or numpy arrays")
        try:
            arr = np.asarray(value)
        except (ValueError, TypeError, OverflowError, RecursionError):  # ragged lists, huge ints
            raise TypeError(f"Session.run: the value fed to '{tensor.name}' is not a rectangular array of "
                            "numbers") from None
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"Session.run: cannot feed {arr.dtype} data to '{tensor.name}' ({tensor.dtype.name})")
        if arr.dtype != dtype:
            with np.errstate(all="ignore"):
                converted = arr.astype(dtype)
                same = (arr.dtype.kind == "f" and dtype.kind == "f") or np.array_equal(
                    converted.astype(arr.dtype), arr)
            if not same:
                raise TypeError(f"Session.run: cannot feed {arr.dtype} values to '{tensor.name}' "
                                f"({tensor.dtype.name}) without changing them; cast the feed or the placeholder")
            arr = converted
    static = tensor.shape.dims
    if static is not None and (len(static) != arr.ndim or any(
            d is not None and d != n for d, n in zip(static, arr.shape))):
        raise ValueError(f"Session.run: cannot feed a value of shape {show(arr.shape)} to "
                         f"'{tensor.name}', which has shape {show(static)}")
    return arr


def _string_feed(value, tensor):
    """str and bytes data (lists, 'S', 'U' or object arrays) as an object array of bytes."""
    if hasattr(value, "_to_tensor") or isinstance(value, (Tensor, Operation)):
        raise TypeError(f"Session.run: the value fed to '{tensor.name}' is a graph element ({value!r}); "
                        "feed str, bytes or arrays of them")
    try:
        return dtypes.string_array(value)
    except TypeError as e:
        raise TypeError(f"Session.run: cannot feed '{tensor.name}' (string): {e}") from None


# -- resolving fetches and feeds ----------------------------------------------------------

def resolve(graph, fetches, feed_keys):
    """(rebuild, single, targets, feeds): the fetch structure's rebuilder, whether it is one
    element, the graph elements it holds in order, and the fed tensors in feed_dict order."""
    leaves = []
    rebuild = _flatten(fetches, leaves)
    targets = [_resolve_fetch(graph, leaf) for leaf in leaves]
    feeds = [_resolve_feed(graph, key) for key in feed_keys]
    for t in feeds:
        if t.dtype is dtypes.variant:
            raise TypeError(f"Session.run: cannot feed '{t.name}': it is a variant (a TensorList), which only "
                            "passes between ops; feed the tensors it is made from")
    for t in targets:
        if isinstance(t, Tensor) and t.dtype is dtypes.variant and t not in feeds:
            raise TypeError(f"Session.run: cannot fetch '{t.name}': it is a variant (a TensorList), which "
                            "only passes between ops; fetch a tensor made from it (TensorListStack)")
    if len(set(feeds)) != len(feeds):
        raise ValueError("Session.run: the same tensor is fed twice")
    return rebuild, isinstance(fetches, (Tensor, Operation, str)), targets, feeds


def _element(graph, key, role):
    """The graph element `key` names, or one error line saying which fetch or feed is wrong."""
    try:
        return graph.as_graph_element(key)
    except KeyError as e:
        raise NotFoundError(f"Session.run: {role} {key!r} does not exist: {e.args[0]}") from None
    except (TypeError, ValueError) as e:
        raise type(e)(f"Session.run: cannot use {key!r} as a {role}: {e}") from None


def _resolve_fetch(graph, fetch):
    return _element(graph, fetch, "fetch")


def _resolve_feed(graph, key):
    if hasattr(key, "_to_tensor"):
        key = key._to_tensor()
    if isinstance(key, str) and ":" not in key:
        key += ":0"
    element = _element(graph, key, "feed_dict key")
    if not isinstance(element, Tensor):
        raise TypeError(f"Session.run: feed_dict key {key!r} is an operation; feed one of its tensors")
    if element.dtype is unsupported_ops.UNKNOWN:
        raise UnimplementedError(f"Session.run: cannot feed '{element.name}': node '{element.op.name}' "
                                 f"({element.op.type}) is one graphdef cannot run, so its dtype is unknown")
    return element


def data_inputs(op):
    refs = op.opdef.ref_inputs
    if not refs:
        return op.inputs
    return [t for i, t in enumerate(op.inputs) if i not in refs]


_PASS_THROUGH = frozenset(("Identity", "StopGradient"))


def forwarded(t, fed):
    """The tensor whose slot `t` can share, looking through Identities that only pass a value on.

    An Identity with control inputs orders a read, and one over a variable is that variable's
    snapshot for the whole run, so both keep their step; one graphdef cannot run (a foreign dtype)
    keeps its step so that the run is refused.
    """
    while (t not in fed and t.op.type in _PASS_THROUGH and not t.op.control_inputs and t.op.inputs
           and t.op.inputs[0].op.type != "VariableV2" and not unsupported_ops.is_unsupported(t.op)):
        t = t.op.inputs[0]
    return t


def _dependencies(op, fed):
    for t in data_inputs(op):
        t = forwarded(t, fed)
        if t not in fed:
            yield t.op
    yield from op.control_inputs


def _roots(targets, fed):
    """The ops the targets start from: fed tensors need no op, nor does an Operation whose every
    output is fed."""
    roots = []
    for t in targets:
        if isinstance(t, Tensor):
            t = forwarded(t, fed)
            if t not in fed:
                roots.append(t.op)
        elif not (t.outputs and all(out in fed for out in t.outputs)):
            roots.append(t)
    return roots


def needed_ops(targets, fed):
    """The ops the targets need, in an order that runs each after its inputs (fed tensors cut the
    graph)."""
    return toposort(_roots(targets, fed), lambda op: _dependencies(op, fed))


def reachable_ops(graph, targets, fed):
    """The ops the targets need, in the graph's order: loops included, which have no run order."""
    stack, seen = _roots(targets, fed), set()
    while stack:
        op = stack.pop()
        if op not in seen:
            seen.add(op)
            stack.extend(_dependencies(op, fed))
    return [op for op in graph.get_operations() if op in seen]


def check_supported(graph, ops):
    """Refuses an op graphdef cannot run (a foreign dtype, an op it does not know), in the graph's order."""
    unsupported = [op for op in ops if unsupported_ops.is_unsupported(op)]
    if unsupported:
        position = {op: i for i, op in enumerate(graph.get_operations())}
        unsupported.sort(key=position.get)
        raise UnimplementedError(f"Session.run: {unsupported_ops.describe(unsupported)}")


def check_runnable(graph, order, feeds):
    """Refuses an op graphdef cannot run, then a placeholder the plan needs but nobody fed."""
    check_supported(graph, order)
    unfed = [op for op in order if op.type == "Placeholder"]
    if unfed:
        fed_names = sorted(t.name for t in feeds)
        described = ", ".join(f"'{op.name}' ({op.outputs[0].dtype.name}, {show(op.outputs[0].shape)})"
                              for op in unfed)
        raise InvalidArgumentError(f"Session.run: placeholder {described} was not fed; "
                                   f"feed_dict has {fed_names}")

