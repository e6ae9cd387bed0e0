"""Graph, Operation and Tensor, name scopes, and the default-graph stack."""

import contextlib
import re
import threading

from graphdef.framework.shapes import show

VALID_NODE_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*$")


class Tensor:
    """One output of an Operation: `op:index`. Hashable by identity, so it can key a feed_dict."""

    __slots__ = ("op", "value_index", "dtype", "_shape", "__weakref__")

    # numpy defers to these operators instead of broadcasting a Tensor into an object array
    __array_priority__ = 100

    def __init__(self, op, value_index, dtype, shape):
        self.op = op
        self.value_index = value_index
        self.dtype = dtype
        self._shape = shape

    @property
    def name(self):
        return f"{self.op.name}:{self.value_index}"

    @property
    def graph(self):
        return self.op.graph

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    def set_shape(self, shape):
        self._shape = self._shape.merge_with(shape)

    @property
    def consumers(self):
        return [op for op in self.op.graph._consumers.get(self, ())]

    def eval(self, feed_dict=None, session=None):
        from graphdef.client.session import default_session_for
        return default_session_for(self.graph, session).run(self, feed_dict)

    def __repr__(self):
        return f"<tf.Tensor '{self.name}' shape={show(self._shape)} dtype={self.dtype.name}>"

    def __bool__(self):
        raise TypeError("using a graph Tensor as a Python bool is not allowed; "
                        "use a Session to evaluate it, or tf.cond-style ops")

    def __iter__(self):
        raise TypeError(f"Tensor '{self.name}' is not iterable while the graph is being built")

    __hash__ = object.__hash__


class Operation:
    """A node: its TF op type, inputs, attrs, and output Tensors."""

    __slots__ = ("graph", "name", "type", "inputs", "control_inputs", "attrs", "outputs", "opdef",
                 "__weakref__")

    def __init__(self, graph, name, opdef, inputs, attrs, control_inputs):
        self.graph = graph
        self.name = name
        self.opdef = opdef
        self.type = opdef.type
        self.inputs = tuple(inputs)
        self.attrs = attrs
        self.control_inputs = tuple(control_inputs)
        self.outputs = ()

    def get_attr(self, name):
        try:
            return self.attrs[name]
        except KeyError:
            raise ValueError(f"operation '{self.name}' ({self.type}) has no attr '{name}'") from None

    def values(self):
        return self.outputs

    @property
    def node_def(self):
        from graphdef.wire.serialize import node_to_proto
        return node_to_proto(self)

    def run(self, feed_dict=None, session=None):
        from graphdef.client.session import default_session_for
        default_session_for(self.graph, session).run(self, feed_dict)

    def __repr__(self):
        return f"<tf.Operation '{self.name}' type={self.type}>"


class Graph:
    """A dataflow graph: operations in creation order, and the names in use."""

    def __init__(self):
        self._ops = {}
        self._names_in_use = {}
        self._name_stack = ""
        self._control_dependencies = []
        self._consumers = {}
        self._variables = []
        self._version = 0
        self._finalized = False
        self._lock = threading.Lock()
        self._control_flow_context = None  # the cond branch or loop body being built (ops/control_flow_api.py)
        self._op_context = {}              # op -> the control-flow context it was built in
        self._loop_of_exit = {}            # a tf.while_loop's Exit op -> its context (for its gradient)
        # the GraphDef library's functions (graphdef.wire.functions.FunctionLibrary), or None
        self.functions = None

    # -- structure --------------------------------------------------------
    def add_op(self, name, opdef, inputs, attrs, output_specs, control_inputs=()):
        """Adds a node whose inputs, attrs and (dtype, shape) outputs are already checked."""
        if self._finalized:
            raise RuntimeError("graph is finalized and cannot be modified")
        control = list(control_inputs)
        for group in self._control_dependencies:
            control.extend(op for op in group if op not in control)
        op = Operation(self, name, opdef, inputs, attrs, control)
        op.outputs = tuple([Tensor(op, i, dtype, shape) for i, (dtype, shape) in enumerate(output_specs)])
        consumers = self._consumers
        for t in inputs:
            if t is not None:   # None: a loop's back edge, linked by import_graph_def afterwards
                readers = consumers.get(t)
                if readers is None:
                    consumers[t] = [op]
                else:
                    readers.append(op)
        self._ops[name] = op
        self._version += 1
        return op

    def _update_input(self, op, index, tensor):
        """Replaces input `index` of `op`: how a loop's Merge gets its NextIteration back edge,
        which can only exist after the loop body that computes it."""
        old = op.inputs[index] if index < len(op.inputs) else None
        if old is None or tensor is None:
            raise TypeError(f"{op.type} '{op.name}': input {index} cannot take a back edge")
        if tensor.dtype is not old.dtype:
            raise TypeError(f"{op.type} '{op.name}': input {index} is {old.dtype.name}, "
                            f"cannot replace it with '{tensor.name}' ({tensor.dtype.name})")
        op.inputs = op.inputs[:index] + (tensor,) + op.inputs[index + 1:]
        consumers = self._consumers.get(old, [])
        if op in consumers and old not in op.inputs:
            consumers.remove(op)
        self._consumers.setdefault(tensor, []).append(op)
        self._version += 1

    def get_operations(self):
        return list(self._ops.values())

    def get_operation_by_name(self, name):
        try:
            return self._ops[name]
        except KeyError:
            raise KeyError(f"the graph has no operation named '{name}'") from None

    def get_tensor_by_name(self, name):
        op_name, sep, index = name.rpartition(":")
        if not sep or not index.isdigit():
            raise ValueError(f"'{name}' is not a tensor name; tensor names look like 'op:0'")
        op = self.get_operation_by_name(op_name)
        i = int(index)
        if i >= len(op.outputs):
            raise KeyError(f"operation '{op_name}' ({op.type}) has {len(op.outputs)} outputs; "
                           f"'{name}' does not exist")
        return op.outputs[i]

    def as_graph_element(self, obj):
        """Resolves a Tensor, Operation, or name ("op:0" or "op") in this graph."""
        if isinstance(obj, (Tensor, Operation)):
            if obj.graph is not self:
                raise ValueError(f"{obj!r} belongs to another graph than the one being run")
            return obj
        if isinstance(obj, str):
            if ":" in obj:
                return self.get_tensor_by_name(obj)
            return self.get_operation_by_name(obj)
        if hasattr(obj, "_as_graph_element"):
            return self.as_graph_element(obj._as_graph_element())
        raise TypeError(f"cannot interpret {obj!r} as a Tensor or Operation")

    @property
    def version(self):
        return self._version

    def finalize(self):
        self._finalized = True

    @property
    def finalized(self):
        return self._finalized

    def as_graph_def(self, add_shapes=False):
        from graphdef.wire.serialize import graph_to_proto
        return graph_to_proto(self, add_shapes=add_shapes)

    # -- names ------------------------------------------------------------
    def unique_name(self, name, mark_as_used=True):
        """`scope/name`, then `scope/name_1`, `scope/name_2`, ... (case-insensitive, as TF does)."""
        if self._name_stack:
            name = f"{self._name_stack}/{name}"
        key = name.lower()
        i = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = i + 1
        if i > 0:
            base = key
            while key in self._names_in_use:
                key = f"{base}_{i}"
                i += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = f"{name}_{i - 1}"
        return name

    def _claim_exact_name(self, name):
        if name in self._ops:
            raise ValueError(f"duplicate node name '{name}'")
        key = name.lower()
        if self._names_in_use.get(key, 0) < 1:
            self._names_in_use[key] = 1
        return name

    def op_name(self, name, default):
        """The node name for a new op: `name` (or `default`) made unique in the current scope.

        A name ending in '/' (as returned by name_scope) is used exactly, without the slash.
        """
        if name and name.endswith("/"):
            return self._claim_exact_name(name[:-1])
        name = name or default
        if not VALID_NODE_NAME.match(name):
            raise ValueError(f"'{name}' is not a valid node name (letters, digits, '.', '_', '-', '/')")
        return self.unique_name(name)

    def get_name_scope(self):
        return self._name_stack

    @contextlib.contextmanager
    def name_scope(self, name):
        """Opens a scope; yields the scope string ('scope/') that names nodes exactly."""
        old = self._name_stack
        if not name:
            new = ""
        elif name.endswith("/"):
            new = name[:-1]
        else:
            new = self.unique_name(name)
        self._name_stack = new
        try:
            yield new + "/" if new else ""
        finally:
            self._name_stack = old

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Ops created inside run only after every op in `control_inputs` (None clears the list)."""
        if control_inputs is None:
            saved, self._control_dependencies = self._control_dependencies, []
            try:
                yield
            finally:
                self._control_dependencies = saved
            return
        ops = []
        for c in control_inputs:
            c = self.as_graph_element(c)
            ops.append(c.op if isinstance(c, Tensor) else c)
        self._control_dependencies.append(ops)
        try:
            yield
        finally:
            self._control_dependencies.pop()

    # -- default graph ----------------------------------------------------
    def as_default(self):
        """Makes this the default graph now; used with `with`, it is undone on exit.

        The bare call (`tf.Graph().as_default()`, as in the seed listing) leaves it default.
        """
        _stack.graphs.append(self)
        return _DefaultGraphContext(self)


class _DefaultGraphContext:
    __slots__ = ("graph",)

    def __init__(self, graph):
        self.graph = graph

    def __enter__(self):
        return self.graph

    def __exit__(self, *exc):
        graphs = _stack.graphs
        for i in range(len(graphs) - 1, -1, -1):
            if graphs[i] is self.graph:
                del graphs[i]
                break
        return False


class _DefaultGraphStack(threading.local):
    def __init__(self):
        self.graphs = [Graph()]


_stack = _DefaultGraphStack()


def get_default_graph():
    return _stack.graphs[-1]


def reset_default_graph():
    """Starts a fresh default graph (and forgets graphs made default by bare as_default calls)."""
    _stack.graphs[:] = [Graph()]


def name_scope(name, default_name=None, values=None):
    """`with name_scope("layer") as scope:` on the default graph."""
    return get_default_graph().name_scope(name or default_name)


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)

