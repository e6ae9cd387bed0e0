"""tf.TensorArray (TF1's graph-mode class) on the TensorArrayV3 ops of graphdef.ops.tensor_array.

Each method builds one op and returns what TF's does: write, scatter, unstack and split a new
TensorArray holding the same handle and the op's flow output, so the ops on one array run in the order
the program wrote them. tf.while_loop carries a TensorArray loop variable as its flow, as TF's does.
"""

from graphdef.framework import dtypes
from graphdef.framework.graph import get_default_graph
from graphdef.framework.shapes import TensorShape
from graphdef.ops import control_flow_api
from graphdef.ops.array import range_, shape_of
from graphdef.ops.registry import build, constant_value, convert_to_tensor
from graphdef.ops.strided_slice import strided_slice
from graphdef.ops.tensor_array import REPLAY


class TensorArray:
    """An array of tensors of one dtype, written once each, for while loops (TF1's tf.TensorArray)."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None,
                 handle=None, flow=None, infer_shape=True, element_shape=None, name=None):
        self._dtype = dtypes.as_dtype(dtype)
        self._infer_shape = infer_shape
        # shared by every TensorArray of one handle (TF's does the same): a write in a loop body tells
        # the array the loop returns its element shape
        self._shape_cell = [TensorShape(element_shape) if element_shape is not None else TensorShape(None)]
        self._dynamic_size = bool(dynamic_size)
        if handle is not None:
            if flow is None:
                raise ValueError("TensorArray: a handle needs its flow")
            self._handle, self._flow = handle, flow
            return
        if size is None:
            raise ValueError("TensorArray: size is required when no handle is given")
        attrs = {"dtype": self._dtype, "element_shape": self._element_shape, "dynamic_size": self._dynamic_size,
                 "clear_after_read": True if clear_after_read is None else bool(clear_after_read),
                 "identical_element_shapes": bool(infer_shape), "tensor_array_name": tensor_array_name or ""}
        op = build("TensorArrayV3", [convert_to_tensor(size, dtypes.int32)], name=name, default_name="TensorArray",
                   attrs=attrs)
        self._handle, self._flow = op.outputs

    @property
    def handle(self):
        return self._handle

    @property
    def flow(self):
        return self._flow

    @property
    def dtype(self):
        return self._dtype

    @property
    def _element_shape(self):
        return self._shape_cell[0]

    @property
    def element_shape(self):
        return self._element_shape

    def _to_tensor(self):
        return self._flow

    def _with_flow(self, flow, shape=None):
        ta = TensorArray(self._dtype, handle=self._handle, flow=flow, infer_shape=self._infer_shape)
        ta._dynamic_size, ta._shape_cell = self._dynamic_size, self._shape_cell
        if shape is not None:
            self._shape_cell[0] = shape
        return ta

    def _merged_shape(self, shape):
        if not self._infer_shape or shape.dims is None:
            return self._element_shape
        if self._element_shape.dims is None:
            return shape
        if not self._element_shape.is_compatible_with(shape):
            raise ValueError(f"TensorArray: an element of shape {shape} does not fit the element shape "
                             f"{self._element_shape}")
        return self._element_shape.merge_with(shape)

    def read(self, index, name=None):
        value = build("TensorArrayReadV3", [self._handle, convert_to_tensor(index, dtypes.int32), self._flow],
                      name=name, default_name="TensorArrayReadV3",
                      attrs={"dtype": self._dtype, **_replay_attr()}).outputs[0]
        if self._element_shape.dims is not None and value.shape.dims is None:
            value._shape = self._element_shape
        return value

    def write(self, index, value, name=None):
        value = convert_to_tensor(value, self._dtype)
        flow = build("TensorArrayWriteV3", [self._handle, convert_to_tensor(index, dtypes.int32), value, self._flow],
                     name=name, default_name="TensorArrayWrite", attrs=_replay_attr()).outputs[0]
        return self._with_flow(flow, self._merged_shape(value.shape))

    def gather(self, indices, name=None):
        value = build("TensorArrayGatherV3", [self._handle, convert_to_tensor(indices, dtypes.int32), self._flow],
                      name=name, default_name="TensorArrayGather",
                      attrs={"dtype": self._dtype, "element_shape": self._element_shape}).outputs[0]
        return value

    def stack(self, name=None):
        value = self.gather(range_(0, self.size()), name=name or "TensorArrayStack")
        size = _static_size(self._handle)
        if size is not None and value.shape.dims is not None:
            value._shape = TensorShape([size, *value.shape.dims[1:]])
        return value

    def scatter(self, indices, value, name=None):
        value = convert_to_tensor(value, self._dtype)
        flow = build("TensorArrayScatterV3",
                     [self._handle, convert_to_tensor(indices, dtypes.int32), value, self._flow],
                     name=name, default_name="TensorArrayScatter").outputs[0]
        rows = TensorShape(None if value.shape.dims is None else value.shape.dims[1:])
        return self._with_flow(flow, self._merged_shape(rows))

    def unstack(self, value, name=None):
        value = convert_to_tensor(value, self._dtype)
        n = strided_slice(shape_of(value), [0], [1], shrink_axis_mask=1)
        return self.scatter(range_(0, n), value, name=name or "TensorArrayUnstack")

    def concat(self, name=None):
        rest = None if self._element_shape.dims is None else self._element_shape.dims[1:]
        return build("TensorArrayConcatV3", [self._handle, self._flow], name=name, default_name="TensorArrayConcat",
                     attrs={"dtype": self._dtype, "element_shape_except0": TensorShape(rest)}).outputs[0]

    def split(self, value, lengths, name=None):
        value = convert_to_tensor(value, self._dtype)
        flow = build("TensorArraySplitV3",
                     [self._handle, value, convert_to_tensor(lengths, dtypes.int64), self._flow],
                     name=name, default_name="TensorArraySplit").outputs[0]
        return self._with_flow(flow)

    def size(self, name=None):
        return build("TensorArraySizeV3", [self._handle, self._flow], name=name,
                     default_name="TensorArraySizeV3").outputs[0]

    def close(self, name=None):
        return build("TensorArrayCloseV3", [self._handle], name=name, default_name="TensorArrayCloseV3")


def _replay_attr():
    """{REPLAY: True} for a read or write built while a while loop's gradient rebuilds its body."""
    return {REPLAY: True} if "while_grad" in get_default_graph()._name_stack.split("/") else {}


def _static_size(handle):
    """The size of a fixed-size array whose size is a constant, seen through the Enters a handle takes
    into loops; else None."""
    op = handle.op
    while op.type == "Enter" and op.inputs:
        op = op.inputs[0].op
    if op.type != "TensorArrayV3" or op.attrs["dynamic_size"]:
        return None
    size = constant_value(op.inputs[0])
    return None if size is None else int(size)


def while_loop(cond, body, loop_vars, *args, **kwargs):
    """tf.while_loop, carrying each TensorArray loop variable as its flow and handing cond and body
    TensorArrays again, as TF's while_loop does."""
    flat = control_flow_api._flatten(loop_vars)
    arrays = [v if isinstance(v, TensorArray) else None for v in flat]
    if not any(arrays):
        return control_flow_api.while_loop(cond, body, loop_vars, *args, **kwargs)

    def as_flows(structure):
        return control_flow_api._pack(structure, [v.flow if isinstance(v, TensorArray) else v
                                                  for v in control_flow_api._flatten(structure)])

    def as_arrays(values):
        return control_flow_api._pack(loop_vars, [a._with_flow(v) if a is not None else v
                                                  for a, v in zip(arrays, control_flow_api._flatten(values))])

    several = isinstance(loop_vars, (list, tuple))

    def wrap(fn, returns_vars):
        def call(*values):
            given = as_arrays(list(values) if several else values[0])
            out = fn(*given) if several else fn(given)
            return as_flows(out) if returns_vars else out
        return call

    result = control_flow_api.while_loop(wrap(cond, False), wrap(body, True), as_flows(loop_vars), *args, **kwargs)
    if isinstance(result, (list, tuple, dict)):
        return as_arrays(result)
    only = [a for a in arrays if a is not None]  # TF1 hands back a lone loop variable unpacked
    return only[0]._with_flow(result) if len(flat) == 1 and only else result


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None):
    """fn applied to each slice of elems along dim 0, the results stacked (TF1's tf.map_fn: a while loop
    reading from TensorArrays unstacked from elems and writing one per output)."""
    flat_in = [convert_to_tensor(e) for e in control_flow_api._flatten(elems)]
    out_dtypes = control_flow_api._flatten(dtype) if dtype is not None else [e.dtype for e in flat_in]
    with get_default_graph().name_scope(name or "map"):
        n = strided_slice(shape_of(flat_in[0]), [0], [1], shrink_axis_mask=1)
        inputs = [TensorArray(e.dtype, size=n, infer_shape=infer_shape).unstack(e) for e in flat_in]
        outputs = [TensorArray(d, size=n, infer_shape=infer_shape) for d in out_dtypes]

        def body(i, *arrays):
            given = control_flow_api._pack(elems, [ta.read(i) for ta in inputs])
            results = control_flow_api._flatten(fn(given))
            if len(results) != len(arrays):
                raise ValueError(f"map_fn: fn returned {len(results)} tensors for {len(arrays)} dtypes")
            return (i + 1, *[ta.write(i, r) for ta, r in zip(arrays, results)])

        final = while_loop(lambda i, *_: i < n, body, [convert_to_tensor(0), *outputs],
                           parallel_iterations=parallel_iterations or 10, back_prop=back_prop)
        stacked = [ta.stack() for ta in final[1:]]
    return control_flow_api._pack(dtype if dtype is not None else elems, stacked)


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False,
         infer_shape=True, reverse=False, name=None):
    """The running fn(accumulator, slice) over elems along dim 0, every step's accumulator stacked
    (TF1's tf.scan); without an initializer the first slice starts it."""
    flat_in = [convert_to_tensor(e) for e in control_flow_api._flatten(elems)]
    with get_default_graph().name_scope(name or "scan"):
        n = strided_slice(shape_of(flat_in[0]), [0], [1], shrink_axis_mask=1)
        inputs = [TensorArray(e.dtype, size=n, infer_shape=infer_shape).unstack(e) for e in flat_in]

        def index(i):
            return n - 1 - i if reverse else i

        if initializer is None:
            first = [ta.read(index(convert_to_tensor(0))) for ta in inputs]
            init, start, structure = first, 1, elems
        else:
            init = [convert_to_tensor(a) for a in control_flow_api._flatten(initializer)]
            start, structure = 0, initializer
        outputs = [TensorArray(a.dtype, size=n, infer_shape=infer_shape) for a in init]
        if initializer is None:
            outputs = [ta.write(index(convert_to_tensor(0)), a) for ta, a in zip(outputs, init)]
        k = len(init)

        def body(i, *state):
            acc, arrays = state[:k], state[k:]
            given = control_flow_api._pack(elems, [ta.read(index(i)) for ta in inputs])
            new = [convert_to_tensor(r) for r in control_flow_api._flatten(
                fn(control_flow_api._pack(structure, list(acc)), given))]
            return (i + 1, *new, *[ta.write(index(i), r) for ta, r in zip(arrays, new)])

        final = while_loop(lambda i, *_: i < n, body, [convert_to_tensor(start), *init, *outputs],
                           parallel_iterations=parallel_iterations, back_prop=back_prop)
        stacked = [ta.stack() for ta in final[1 + k:]]
    return control_flow_api._pack(structure, stacked)
