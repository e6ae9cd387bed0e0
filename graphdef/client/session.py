"""Session.run: prune to what the fetches need, order it, run the numpy kernels.

A plan is made once per (fetches, feed keys) and reused. It is a list of steps
that read and write numbered slots, so the run loop does no graph work at all; an
intermediate's slot is cleared after its last use.
"""

import functools
import os
import threading

import numpy as np

from graphdef.client.control_flow_exec import ControlFlowPlan, reaches_control_flow
from graphdef.framework import dtypes
from graphdef.framework.errors import (InvalidArgumentError, NotFoundError, OpError,
                                       ResourceExhaustedError, UnimplementedError)
from graphdef.framework.graph import Operation, Tensor, get_default_graph
from graphdef.framework.limits import TensorTooLarge, check as check_tensor_size
from graphdef.framework.shapes import show
from graphdef.framework.toposort import toposort
from graphdef.client.functions import FunctionRuntime
from graphdef.client.session_steps import may_donate, may_donate_last, segments as _segments
from graphdef.ops.control_flow import CONTROL_FLOW_OPS
from graphdef.ops import unsupported as unsupported_ops

# In tests every kernel's output is checked against the op's inferred dtype and shape.
CHECK_KERNELS = os.environ.get("GRAPHDEF_CHECK_KERNELS") == "1"


class Session:
    """Runs a graph; keeps variable values across run() calls until closed."""

    def __init__(self, target="", graph=None, config=None):
        self.graph = graph if graph is not None else get_default_graph()
        self._variables = {}
        self._plans = {}
        self._closed = False

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Evaluates `fetches` (a Tensor, Operation, name, or a list/tuple/dict of them)."""
        if self._closed:
            raise RuntimeError("Session.run: this session is closed")
        return self._plan(fetches, feed_dict).run(feed_dict)

    def _plan(self, fetches, feed_dict):
        feed_keys = tuple(feed_dict) if feed_dict else ()
        key = (fetches if isinstance(fetches, (Tensor, Operation, str)) else _structure_key(fetches),
               feed_keys)
        plan = self._plans.get(key)
        if plan is None:
            plan = _make_plan(self, fetches, feed_keys)
            self._plans[key] = plan
        return plan

    def close(self):
        self._closed = True
        self._variables.clear()
        self._plans.clear()

    def as_default(self):
        return _DefaultSession(self)

    def __enter__(self):
        self._default = _DefaultSession(self)
        self._default.__enter__()
        return self

    def __exit__(self, *exc):
        self._default.__exit__(*exc)
        self.close()
        return False


class InteractiveSession(Session):
    """A Session that installs itself as the default session when created."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        _sessions.stack.append(self)

    def close(self):
        if self in _sessions.stack:
            _sessions.stack.remove(self)
        super().close()


class _SessionStack(threading.local):
    def __init__(self):
        self.stack = []


_sessions = _SessionStack()


class _DefaultSession:
    def __init__(self, session):
        self.session = session

    def __enter__(self):
        _sessions.stack.append(self.session)
        return self.session

    def __exit__(self, *exc):
        if _sessions.stack and _sessions.stack[-1] is self.session:
            _sessions.stack.pop()
        return False


def optimization_report(session, fetches, feed_dict=None):
    """What the load-time passes changed in the graph session.run(fetches, feed_dict) runs
    (graphdef.optimize.Report), or None when it runs the graph as it is."""
    return getattr(session._plan(fetches, feed_dict), "optimization", None)


def get_default_session():
    return _sessions.stack[-1] if _sessions.stack else None


def default_session_for(graph, session=None):
    session = session or get_default_session()
    if session is None:
        raise ValueError("no default session: pass session=..., or use `with sess.as_default():`")
    if session.graph is not graph:
        raise ValueError("the default session runs another graph than this tensor's")
    return session


# -- fetch structures -------------------------------------------------------------------

def _structure_key(fetches):
    if isinstance(fetches, (list, tuple)):
        return (type(fetches).__name__,) + tuple(_structure_key(f) for f in fetches)
    if isinstance(fetches, dict):
        return ("dict",) + tuple((k, _structure_key(v)) for k, v in fetches.items())
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


def _fast_scalar(array):
    """0-d arrays travel as numpy scalars: same dtype and semantics, a fraction of the overhead."""
    return array[()] if type(array) is np.ndarray and array.ndim == 0 else array


def _result(value):
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
    if type(value) is np.ndarray and value.dtype == dtype:
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


# -- plans ------------------------------------------------------------------------------

def _make_plan(session, fetches, feed_keys):
    """The plain plan, or the control-flow executor when the fetches need a Switch, Merge or loop."""
    graph = session.graph
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
    if any(op.type in CONTROL_FLOW_OPS for op in graph._ops.values()):
        fed = set(feeds)
        if len(fed) != len(feeds):
            raise ValueError("Session.run: the same tensor is fed twice")
        if reaches_control_flow(targets, fed):
            return ControlFlowPlan(session, targets, feeds, rebuild, isinstance(fetches, (Tensor, Operation, str)),
                                   _bind_kernel, convert_feed, _result)
    # A graph loaded from a file carries the optimizer its loader set up (graphdef.optimize.at_load):
    # given what this plan fetches and feeds, it may offer a graph optimized for them.
    run_optimizer = getattr(graph, "_run_optimizer", None)
    optimized = run_optimizer(graph, targets, feeds) if run_optimizer is not None else None
    if optimized is not None:
        return _Plan(session, fetches, feed_keys, optimized=optimized)
    return _Plan(session, fetches, feed_keys)


class _Plan:
    """`optimized`: (graph, report) of an optimized copy of session.graph to run instead, whose
    fetched and fed nodes have the same names; `self.optimization` keeps the report."""

    def __init__(self, session, fetches, feed_keys, optimized=None):
        graph = session.graph
        leaves = []
        self.rebuild = _flatten(fetches, leaves)
        self.single = isinstance(fetches, (Tensor, Operation, str))
        targets = [_resolve_fetch(graph, leaf) for leaf in leaves]
        self.feeds = [_resolve_feed(graph, key) for key in feed_keys]
        self.optimization = None
        if optimized is not None:
            graph, self.optimization = optimized
            targets = [graph.as_graph_element(t.name) for t in targets]
            self.feeds = [graph.get_tensor_by_name(t.name) for t in self.feeds]
        fed = {t: i for i, t in enumerate(self.feeds)}
        if len(fed) != len(self.feeds):
            raise ValueError("Session.run: the same tensor is fed twice")

        def slot_source(t):
            return _forwarded(t, fed)

        roots = []
        for t in targets:
            if isinstance(t, Tensor):
                t = slot_source(t)
                if t not in fed:
                    roots.append(t.op)
            elif not (t.outputs and all(out in fed for out in t.outputs)):  # a fully fed op need not run
                roots.append(t)
        order = toposort(roots, lambda op: _dependencies(op, fed))
        unsupported = [op for op in order if unsupported_ops.is_unsupported(op)]
        if unsupported:
            position = {op: i for i, op in enumerate(graph.get_operations())}
            unsupported.sort(key=position.get)
            raise UnimplementedError(f"Session.run: {unsupported_ops.describe(unsupported)}")

        unfed = [op for op in order if op.type == "Placeholder"]
        if unfed:
            fed_names = sorted(t.name for t in self.feeds)
            described = ", ".join(f"'{op.name}' ({op.outputs[0].dtype.name}, {show(op.outputs[0].shape)})"
                                  for op in unfed)
            raise InvalidArgumentError(f"Session.run: placeholder {described} was not fed; "
                                       f"feed_dict has {fed_names}")

        slots = {}
        for t in self.feeds:
            slots[t] = len(slots)
        for op in order:
            for t in op.outputs:
                slots[t] = len(slots)
        def slot_of(t):
            return slots[slot_source(t)]

        self.feed_slots = [slots[t] for t in self.feeds]
        self.fetch_slots = [slot_of(t) if isinstance(t, Tensor) else None for t in targets]
        keep = set(self.fetch_slots) | set(self.feed_slots)

        compute = _with_variable_reads(order, targets, fed)
        _check_static_sizes(compute)
        keep |= {slots[op.outputs[0]] for op in compute if op.type == "VariableV2"}
        last_use = {}
        for i, op in enumerate(compute):
            for t in _data_inputs(op):
                last_use[slot_of(t)] = i
        frees = [[] for _ in compute]
        for slot, i in last_use.items():
            if slot not in keep:
                frees[i].append(slot)

        # one spare slot at the end absorbs "frees" of steps that free nothing
        self.initial = [None] * (len(slots) + 1)
        for op in order:
            if op.type == "Const":
                self.initial[slots[op.outputs[0]]] = _fast_scalar(op.attrs["value"])
        ins = [[slot_of(t) for t in _data_inputs(op)] for op in compute]
        donating = [may_donate(op, i, f) or ("last" if may_donate_last(op, i, f) else False)
                    for op, i, f in zip(compute, ins, frees)]
        self.segments = _segments([_bind_kernel(op, session) for op in compute], ins,
                                  [[slots[t] for t in op.outputs] for op in compute], frees, len(slots), donating)
        self.ops = compute
        self.first_output = [slots[op.outputs[0]] if op.outputs else None for op in compute]

    def run(self, feed_dict):
        values = self.initial[:]
        if self.feeds:
            for slot, tensor, value in zip(self.feed_slots, self.feeds, feed_dict.values()):
                values[slot] = _fast_scalar(convert_feed(value, tensor))
        with np.errstate(all="ignore"):
            try:
                for run_segment, items in self.segments:
                    run_segment(values, items)
            except TensorTooLarge as exc:  # a kernel refused to allocate: name the node that asked
                raise self._node_error(values, exc) from None
            except OpError:
                raise
            except Exception as exc:  # a kernel failed: name the node that did
                raise self._node_error(values, exc) from exc
        if self.single:
            slot = self.fetch_slots[0]
            return None if slot is None else _result(values[slot])
        return self.rebuild([None if s is None else _result(values[s]) for s in self.fetch_slots])

    def _node_error(self, values, exc):
        for op, slot in zip(self.ops, self.first_output):
            if slot is not None and values[slot] is None:
                break
        else:
            op = self.ops[-1]
        if isinstance(exc, TensorTooLarge):
            return ResourceExhaustedError(f"node '{op.name}' ({op.type}): {exc}")
        if isinstance(exc, MemoryError) or "too big" in str(exc) or "Maximum allowed size" in str(exc):
            return ResourceExhaustedError(f"node '{op.name}' ({op.type}): out of memory: {exc}")
        return InvalidArgumentError(f"node '{op.name}' ({op.type}): {exc}")


def _check_static_sizes(compute):
    """Refuses, before anything runs, a step whose inferred output is fully known and over the
    tensor size limit (tf.zeros([10**6, 10**6]) and its like): the kernels check the sizes
    that only values decide."""
    for op in compute:
        for t in op.outputs:
            dims = t.shape.dims
            if dims and None not in dims:
                check_tensor_size(dims, t.dtype.np, where=f"node '{op.name}' ({op.type})")


def _with_variable_reads(order, targets, fed):
    """The ops to run, with each variable read placed right before each op that consumes it.

    A variable is read when its consumer runs, as in TensorFlow, so a read ordered after an
    assignment (by a control dependency) sees the new value. Consts need no step at all.
    """
    compute = []
    for op in order:
        if op.type in ("Const", "VariableV2"):
            continue
        for var_op in dict.fromkeys(t.op for t in _data_inputs(op) if t.op.type == "VariableV2" and t not in fed):
            compute.append(var_op)
        compute.append(op)
    for t in targets:  # a fetched variable, as a tensor or as an op, is read (so checked) last
        if isinstance(t, Tensor) and t.op.type == "VariableV2" and t not in fed:
            compute.append(t.op)
        elif isinstance(t, Operation) and t.type == "VariableV2" and t.outputs[0] not in fed:
            compute.append(t)
    return compute


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


def _data_inputs(op):
    refs = op.opdef.ref_inputs
    if not refs:
        return op.inputs
    return [t for i, t in enumerate(op.inputs) if i not in refs]


_PASS_THROUGH = frozenset(("Identity", "StopGradient"))


def _forwarded(t, fed):
    """The tensor whose slot `t` can share, looking through Identities that only pass a value on.

    An Identity with control inputs orders a read, and one over a variable is that variable's
    snapshot for the whole run, so both keep their step.
    """
    while (t not in fed and t.op.type in _PASS_THROUGH and not t.op.control_inputs and t.op.inputs
           and t.op.inputs[0].op.type != "VariableV2"):
        t = t.op.inputs[0]
    return t


def _dependencies(op, fed):
    for t in _data_inputs(op):
        t = _forwarded(t, fed)
        if t not in fed:
            yield t.op
    yield from op.control_inputs


def _bind_kernel(op, session):
    opdef = op.opdef
    kwargs = {}
    for name in opdef.kernel_params:
        if name == "state":
            kwargs[name] = session._variables
        elif name == "node":
            kwargs[name] = op.name
        elif name == "functions":
            kwargs[name] = _function_runtime(session)
        elif name == "ref":
            kwargs[name] = op.inputs[opdef.ref_inputs[0]].op.name
        elif name == "refs":
            kwargs[name] = tuple(op.inputs[i].op.name for i in opdef.ref_inputs)
        elif name in ("out", "last_input_donated"):
            continue  # given per run, when the input may be overwritten (session_steps)
        else:
            kwargs[name] = op.attrs[name]
    kernel = functools.partial(opdef.kernel, **kwargs) if kwargs else opdef.kernel
    if CHECK_KERNELS:
        kernel = _checked(op, kernel)
    return kernel


def _function_runtime(session):
    runtime = getattr(session, "_functions", None)
    if runtime is None:
        runtime = session._functions = FunctionRuntime(session.graph.functions, Session, session._variables)
    return runtime


def _checked(op, kernel):
    def run(*args, **kwargs):
        out = kernel(*args, **kwargs)
        results = (out,) if len(op.outputs) == 1 else tuple(out)
        for t, value in zip(op.outputs, results):
            if t.dtype is dtypes.variant:
                continue
            value = np.asarray(value)
            if value.dtype != t.dtype.np or not t.shape.is_compatible_with(value.shape):
                raise AssertionError(f"kernel of '{op.name}' ({op.type}) gave {value.dtype}{show(value.shape)}; "
                                     f"inference said {t.dtype.name}{show(t.shape)}")
        return out
    return run
