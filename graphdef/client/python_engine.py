"""The numpy engine: prune to what the fetches need, order it, run the numpy kernels.

A plan is made once per (fetches, feed keys) and reused. It is a list of steps
that read and write numbered slots, so the run loop does no graph work at all; an
intermediate's slot is cleared after its last use.
"""

import functools
import os

import numpy as np

from graphdef.client import run_args
from graphdef.client.control_flow_exec import ControlFlowPlan, reaches_control_flow
from graphdef.client.functions import FunctionRuntime
from graphdef.client.run_args import (check_runnable, check_supported, convert_feed, data_inputs, fast_scalar,
                                      forwarded, needed_ops, reachable_ops, resolve, result)
from graphdef.client.session_steps import segments as _segments
from graphdef.framework import dtypes, limits
from graphdef.framework.errors import InvalidArgumentError, OpError, ResourceExhaustedError
from graphdef.framework.graph import Operation, Tensor
from graphdef.framework.limits import TensorTooLarge, check as check_tensor_size
from graphdef.framework.shapes import show
from graphdef.ops.control_flow import CONTROL_FLOW_OPS

# In tests every kernel's output is checked against the op's inferred dtype and shape.
CHECK_KERNELS = os.environ.get("GRAPHDEF_CHECK_KERNELS") == "1"


def make_plan(session, fetches, feed_keys):
    """The plain plan, or the control-flow executor when the fetches need a Switch, Merge or loop."""
    graph = session.graph
    rebuild, single, targets, feeds = resolve_for(session, fetches, feed_keys)
    feed = _body_feed if _runs_a_function_body(session) else convert_feed
    if any(op.type in CONTROL_FLOW_OPS for op in graph._ops.values()) and reaches_control_flow(targets, set(feeds)):
        check_supported(graph, reachable_ops(graph, targets, set(feeds)))
        return ControlFlowPlan(session, targets, feeds, rebuild, single, _bind_kernel, feed, result)
    # A graph loaded from a file carries the optimizer its loader set up (graphdef.optimize.at_load):
    # given what this plan fetches and feeds, it may offer a graph optimized for them.
    run_optimizer = getattr(graph, "_run_optimizer", None)
    optimized = run_optimizer(graph, targets, feeds) if run_optimizer is not None else None
    plan = _Plan(session, rebuild, single, targets, feeds, optimized)
    plan.convert_feed = feed
    return plan


# What only passes between ops (a TensorList, a TensorArray's handle): a user cannot feed or fetch it, but a
# While or call op hands it to its function's body, which the FunctionRuntime runs as a Session of its own.
_OPAQUE = frozenset(("variant", "resource"))


def resolve_for(session, fetches, feed_keys):
    """run_args.resolve for the user's runs; a function body's run may also feed and fetch opaque values."""
    if _runs_a_function_body(session):
        return _resolve_body(session.graph, fetches, feed_keys)
    resolved = resolve(session.graph, fetches, feed_keys)
    for t, role, fix in [(t, "feed", "feed the tensors it is made from") for t in resolved[3]] + [
            (t, "fetch", "fetch a tensor read from it") for t in resolved[2]]:
        if isinstance(t, Tensor) and t.dtype.name == "resource" and (role == "feed" or t not in resolved[3]):
            raise TypeError(f"Session.run: cannot {role} '{t.name}': it is a resource (a TensorArray's handle), "
                            f"which only passes between ops; {fix}")
    return resolved


def _runs_a_function_body(session):
    runtime = getattr(session, "_functions", None)
    return runtime is not None and any(s is session for s in getattr(runtime, "_sessions", {}).values())


def _resolve_body(graph, fetches, feed_keys):
    """run_args.resolve without its refusal of opaque feeds and fetches: a body's arguments and results."""
    leaves = []
    rebuild = run_args._flatten(fetches, leaves)
    targets = [run_args._resolve_fetch(graph, leaf) for leaf in leaves]
    feeds = [run_args._resolve_feed(graph, key) for key in feed_keys]
    return rebuild, isinstance(fetches, (Tensor, Operation, str)), targets, feeds


def _body_feed(value, tensor):
    return value if tensor.dtype.name in _OPAQUE else convert_feed(value, tensor)


class _Plan:
    """`optimized`: (graph, report) of an optimized copy of session.graph to run instead, whose
    fetched and fed nodes have the same names; `self.optimization` keeps the report."""

    convert_feed = staticmethod(convert_feed)

    def __init__(self, session, rebuild, single, targets, feeds, optimized=None):
        self.rebuild, self.single, self.feeds = rebuild, single, feeds
        self.optimization = None
        graph = session.graph
        if optimized is not None:
            graph, self.optimization = optimized
            targets = [graph.as_graph_element(t.name) for t in targets]
            self.feeds = [graph.get_tensor_by_name(t.name) for t in self.feeds]
        fed = {t: i for i, t in enumerate(self.feeds)}

        def slot_source(t):
            return forwarded(t, fed)

        order = needed_ops(targets, fed)
        check_runnable(graph, order, self.feeds)

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
            for t in data_inputs(op):
                last_use[slot_of(t)] = i
        frees = [[] for _ in compute]
        for slot, i in last_use.items():
            if slot not in keep:
                frees[i].append(slot)

        # one spare slot at the end absorbs "frees" of steps that free nothing
        self.initial = [None] * (len(slots) + 1)
        for op in order:
            if op.type == "Const":
                self.initial[slots[op.outputs[0]]] = fast_scalar(op.attrs["value"])
        ins = [[slot_of(t) for t in data_inputs(op)] for op in compute]
        self.segments = _segments([_bind_kernel(op, session) for op in compute], ins,
                                  [[slots[t] for t in op.outputs] for op in compute], frees, len(slots))
        self.ops = compute
        self.first_output = [slots[op.outputs[0]] if op.outputs else None for op in compute]

    def run(self, feed_dict):
        values = self.initial[:]
        if self.feeds:
            for slot, tensor, value in zip(self.feed_slots, self.feeds, feed_dict.values()):
                values[slot] = fast_scalar(self.convert_feed(value, tensor))
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
            return None if slot is None else result(values[slot])
        return self.rebuild([None if s is None else result(values[s]) for s in self.fetch_slots])

    def _node_error(self, values, exc):
        for op, slot in zip(self.ops, self.first_output):
            if slot is not None and values[slot] is None:
                break
        else:
            op = self.ops[-1]
        if isinstance(exc, TensorTooLarge):
            return ResourceExhaustedError(f"node '{op.name}' ({op.type}): {exc}")
        if isinstance(exc, MemoryError):
            return ResourceExhaustedError(f"node '{op.name}' ({op.type}): {limits.out_of_memory_text()}")
        if "too big" in str(exc) or "Maximum allowed size" in str(exc):
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
        for var_op in dict.fromkeys(t.op for t in data_inputs(op) if t.op.type == "VariableV2" and t not in fed):
            compute.append(var_op)
        compute.append(op)
    for t in targets:  # a fetched variable, as a tensor or as an op, is read (so checked) last
        if isinstance(t, Tensor) and t.op.type == "VariableV2" and t not in fed:
            compute.append(t.op)
        elif isinstance(t, Operation) and t.type == "VariableV2" and t.outputs[0] not in fed:
            compute.append(t)
    return compute


def _bind_kernel(op, session):
    opdef = op.opdef
    kwargs = {}
    for name in opdef.kernel_params:
        if name == "state":
            kwargs[name] = session._variables.python
        elif name == "node":
            kwargs[name] = op.name
        elif name == "functions":
            kwargs[name] = _function_runtime(session)
        elif name == "ref":
            kwargs[name] = op.inputs[opdef.ref_inputs[0]].op.name
        elif name == "refs":
            kwargs[name] = tuple(op.inputs[i].op.name for i in opdef.ref_inputs)
        elif name in ("out", "last_input_donated"):
            continue  # the numpy engine never lets a kernel write into an input
        else:
            kwargs[name] = op.attrs[name]
    kernel = functools.partial(opdef.kernel, **kwargs) if kwargs else opdef.kernel
    if any(t.dtype is dtypes.string for t in op.outputs):
        kernel = _strings_kept(op, kernel)
    if CHECK_KERNELS:
        kernel = _checked(op, kernel)
    return kernel


def _as_string_array(value):
    """numpy hands one element of an object array on as a bare `bytes` (Gather, Unpack, indexing),
    which the next np.asarray would make 'S', dropping its trailing NUL bytes: keep it an array."""
    if isinstance(value, bytes):
        array = np.empty((), dtype=object)
        array[()] = value
        return array
    if type(value) is np.ndarray and value.dtype.kind == "S":
        return value.astype(object)
    return value


def _strings_kept(op, kernel):
    if len(op.outputs) == 1:
        return lambda *args, **kwargs: _as_string_array(kernel(*args, **kwargs))
    return lambda *args, **kwargs: tuple(map(_as_string_array, kernel(*args, **kwargs)))


def _function_runtime(session):
    runtime = getattr(session, "_functions", None)
    if runtime is None:
        runtime = session._functions = FunctionRuntime(session.graph.functions, session._function_session,
                                                         session._variables)
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
