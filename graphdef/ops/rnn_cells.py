"""TF1's tf.nn.dynamic_rnn and its cells (tf.nn.rnn_cell: BasicRNNCell, BasicLSTMCell, LSTMCell).

dynamic_rnn is built as TF1 builds it: the inputs, time-major, unstacked into a TensorArray, a
tf.while_loop running the cell one step at a time and writing each output to another, the outputs
stacked. Past a sequence's length its output is zeros and its state is carried through unchanged.
The cells' variables have TF1's names (rnn/lstm_cell/kernel, .../bias, under the enclosing
variable_scope), so a TF1 checkpoint of such a model restores into them; they are made before the
loop, the first time the cell sees its input width.
"""

import collections
import math as pymath

from graphdef.framework import dtypes
from graphdef.framework.graph import get_default_graph
from graphdef.framework.shapes import TensorShape
from graphdef.ops import array, compare, math
from graphdef.ops.registry import build
from graphdef.ops.state import Variable
from graphdef.ops.manip import concat, expand_dims, split, stack
from graphdef.ops.matmul import matmul
from graphdef.ops.registry import convert_to_tensor
from graphdef.ops import reverse_pad
from graphdef.ops.reverse_sequence import reverse_sequence
from graphdef.ops.tensor_array_api import TensorArray, while_loop

LSTMStateTuple = collections.namedtuple("LSTMStateTuple", ("c", "h"))


class _Cell:
    """What dynamic_rnn needs of a cell: its sizes, zero_state, and one step on variables made once."""

    _name = "rnn_cell"

    def __init__(self, num_units, activation=None, name=None):
        self._units = num_units
        self._activation = activation or math.tanh
        self._name = name or self._name
        self._variables = None

    @property
    def output_size(self):
        return self._units

    def zero_state(self, batch_size, dtype):
        shape = [batch_size, self._units] if isinstance(batch_size, int) else stack([batch_size, self._units])
        zeros = array.fill(shape, convert_to_tensor(0, dtypes.as_dtype(dtype)))
        return LSTMStateTuple(zeros, zeros) if self._is_lstm else zeros

    _is_lstm = False

    def build(self, input_depth, dtype, scope):
        """Makes the kernel [input_depth + units, gates * units] (glorot-uniform) and bias (zeros), once,
        named `scope`/cell name/kernel and /bias under the enclosing variable_scope, as TF1's."""
        if self._variables is None:
            width = self._gates * self._units
            self._variables = (_variable(f"{scope}/{self._name}/kernel", [input_depth + self._units, width], dtype),
                               _variable(f"{scope}/{self._name}/bias", [width], dtype, zeros=True))
        return self._variables

    def _linear(self, inputs, h):
        kernel, bias = self._variables
        return math.add(matmul(concat([inputs, h], 1), kernel), bias)


class BasicRNNCell(_Cell):
    """output = new_state = activation(W [x, h] + b)."""

    _name, _gates = "basic_rnn_cell", 1

    @property
    def state_size(self):
        return self._units

    def __call__(self, inputs, state):
        out = self._activation(self._linear(inputs, state))
        return out, out


class BasicLSTMCell(_Cell):
    """TF1's LSTM without peepholes or projection: gates i, j, f, o from W [x, h] + b, f biased by
    forget_bias; state (c, h)."""

    _name, _gates, _is_lstm = "basic_lstm_cell", 4, True

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None, name=None):
        if not state_is_tuple:
            raise ValueError("state_is_tuple=False is not supported; the state is an LSTMStateTuple (c, h)")
        super().__init__(num_units, activation, name)
        self._forget_bias = forget_bias

    @property
    def state_size(self):
        return LSTMStateTuple(self._units, self._units)

    def __call__(self, inputs, state):
        c, h = state
        i, j, f, o = split(self._linear(inputs, h), 4, axis=1)
        bias = convert_to_tensor(self._forget_bias, f.dtype)
        new_c = math.add(math.multiply(c, math.sigmoid(math.add(f, bias))),
                         math.multiply(math.sigmoid(i), self._activation(j)))
        new_h = math.multiply(self._activation(new_c), math.sigmoid(o))
        return new_h, LSTMStateTuple(new_c, new_h)


class LSTMCell(BasicLSTMCell):
    """tf.nn.rnn_cell.LSTMCell with its defaults (no peepholes, no projection, no clipping)."""

    _name = "lstm_cell"

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None, num_proj=None,
                 forget_bias=1.0, state_is_tuple=True, activation=None, name=None):
        if use_peepholes or cell_clip is not None or num_proj is not None:
            raise ValueError("LSTMCell: peepholes, cell_clip and num_proj are not supported")
        super().__init__(num_units, forget_bias, state_is_tuple, activation, name)


def _variable(name, shape, dtype, zeros=False):
    """A variable as tf.get_variable makes it inside the current variable_scope (graphdef.init_ops keeps its
    scopes and names on the graph; read here without importing that higher layer)."""
    graph = get_default_graph()
    scopes = getattr(graph, "_variable_scopes", None)
    prefix = scopes[-1].name if scopes else ""
    full = f"{prefix}/{name}" if prefix else name
    named = getattr(graph, "_named_variables", None)
    if named is not None and full in named:
        raise ValueError(f"Variable {full} already exists, disallowed; give the RNN another scope")
    with graph.name_scope(full + "/Initializer/"):
        if zeros:
            initial = array.zeros(shape, dtype)
        else:
            limit = pymath.sqrt(6.0 / (shape[0] + shape[1]))
            unit = build("RandomUniform", [array.constant(shape, dtypes.int32)], attrs={"dtype": dtype}).outputs[0]
            initial = math.subtract(math.multiply(unit, 2.0 * limit), limit)
    variable = Variable(initial, trainable=True, name=full + "/", dtype=dtype)
    if named is not None:
        named[full] = variable
    return variable


def _flat_state(state):
    return list(state) if isinstance(state, tuple) else [state]


def _as_state(cell, flat):
    return LSTMStateTuple(*flat) if cell._is_lstm else flat[0]


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None, parallel_iterations=None,
                swap_memory=False, time_major=False, scope=None):
    """(outputs [batch, time, units] (or time-major), final state) of `cell` run over `inputs`."""
    scope = scope or "rnn"
    with get_default_graph().name_scope(scope):
        return _run(cell, inputs, sequence_length, initial_state, dtype, parallel_iterations, time_major, scope)


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None, initial_state_fw=None,
                              initial_state_bw=None, dtype=None, parallel_iterations=None, swap_memory=False,
                              time_major=False, scope=None):
    """((outputs forward, outputs backward), (final state forward, backward)): the backward cell runs over
    each sequence reversed within its length, its outputs reversed back, as TF1's."""
    inputs = convert_to_tensor(inputs)
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)

    def reverse(x):
        if sequence_length is None:
            return reverse_pad.reverse(x, [time_axis])
        return reverse_sequence(x, sequence_length, seq_axis=time_axis, batch_axis=batch_axis)

    scope = scope or "bidirectional_rnn"
    graph = get_default_graph()
    with graph.name_scope(scope):
        with graph.name_scope("fw"):
            out_fw, state_fw = _run(cell_fw, inputs, sequence_length, initial_state_fw, dtype, parallel_iterations,
                                    time_major, f"{scope}/fw")
        with graph.name_scope("bw"):
            out_bw, state_bw = _run(cell_bw, reverse(inputs), sequence_length, initial_state_bw, dtype,
                                    parallel_iterations, time_major, f"{scope}/bw")
    return (out_fw, reverse(out_bw)), (state_fw, state_bw)


def _run(cell, inputs, sequence_length, initial_state, dtype, parallel_iterations, time_major, scope):
    inputs = convert_to_tensor(inputs)
    dims = inputs.shape.dims
    if dims is None or len(dims) != 3 or dims[2] is None:
        raise ValueError(f"dynamic_rnn: inputs must be [batch, time, depth] with a known depth, got {inputs.shape}")
    dtype = dtypes.as_dtype(dtype) if dtype is not None else inputs.dtype
    cell.build(dims[2], dtype, scope)
    steps_first = inputs if time_major else array.transpose(inputs, [1, 0, 2])
    shape = array.shape_of(steps_first)
    steps, batch = shape[0], shape[1]
    if initial_state is None:
        known = dims[1] if time_major else dims[0]
        initial_state = cell.zero_state(batch if known is None else known, dtype)
    flat0 = _flat_state(initial_state)
    inputs_ta = TensorArray(dtype, size=steps).unstack(steps_first)
    outputs_ta = TensorArray(dtype, size=steps)
    lengths = None if sequence_length is None else math.cast(convert_to_tensor(sequence_length), dtypes.int32)

    def body(t, out_ta, *flat):
        state = _as_state(cell, list(flat))
        output, new_state = cell(inputs_ta.read(t), state)
        new_flat = _flat_state(new_state)
        if lengths is not None:  # past a sequence's end: zero output, the state carried through
            done = expand_dims(compare.greater_equal(t, lengths), 1)
            output = compare.select_v2(done, array.zeros_like(output), output)
            new_flat = [compare.select_v2(done, old, new) for old, new in zip(flat, new_flat)]
        return (math.add(t, 1), out_ta.write(t, output), *new_flat)

    final = while_loop(lambda t, *_: compare.less(t, steps), body,
                       [convert_to_tensor(0), outputs_ta, *flat0],
                       parallel_iterations=parallel_iterations or 32)
    outputs = final[1].stack()
    if not time_major:
        outputs = array.transpose(outputs, [1, 0, 2])
    if outputs.shape.dims is not None:  # the loop hides what the inputs say of batch and time
        outputs._shape = TensorShape([dims[0], dims[1], outputs.shape.dims[2]])
    return outputs, _as_state(cell, list(final[2:]))


class rnn_cell:  # noqa: N801 - TF's module name, a namespace here
    BasicRNNCell, BasicLSTMCell, LSTMCell, LSTMStateTuple = BasicRNNCell, BasicLSTMCell, LSTMCell, LSTMStateTuple


__all__ = ["BasicLSTMCell", "BasicRNNCell", "LSTMCell", "LSTMStateTuple", "bidirectional_dynamic_rnn", "dynamic_rnn",
           "rnn_cell"]
