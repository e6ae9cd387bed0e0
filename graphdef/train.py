"""tf.train: optimizers that build their update step into the graph, with TF's own update ops."""

import numpy as np

from graphdef.gradients import gradients, gradients_released_together
from graphdef.framework.graph import get_default_graph
from graphdef.ops.array import constant, group, zeros
from graphdef.ops.math import cast, floordiv, multiply, pow, truediv  # noqa: A004 - TF's pow builder
from graphdef.ops.registry import build, convert_to_tensor
from graphdef.ops.state import Variable, assign, assign_add, trainable_variables
from graphdef.wire.checkpoint import (Saver, checkpoint_exists, import_meta_graph, latest_checkpoint,  # noqa: F401
                                      list_variables, load_variable)  # tf.train's checkpoint API
from graphdef.wire.serialize import write_graph  # noqa: F401 - TF1 kept write_graph here too


def get_global_step(graph=None):
    """The graph's global step variable, or None if there is none yet."""
    graph = graph or get_default_graph()
    return getattr(graph, "_global_step", None)


def get_or_create_global_step(graph=None):
    """A non-trainable int64 scalar variable named global_step, made once per graph."""
    graph = graph or get_default_graph()
    if get_global_step(graph) is None:
        # at the root, whatever scope the caller is in, as TF1 makes it
        with graph.as_default(), graph.control_dependencies(None):
            with graph.name_scope("global_step/Initializer/"):
                zero = constant(np.int64(0), name="zeros")
            graph._global_step = Variable(zero, trainable=False, name="global_step/")
    return graph._global_step


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """learning_rate * decay_rate ** (global_step / decay_steps), the exponent floored with staircase."""
    graph = get_default_graph()
    with graph.name_scope(name or "ExponentialDecay") as scope:
        rate = convert_to_tensor(learning_rate, name="learning_rate")
        step = cast(convert_to_tensor(global_step), rate.dtype)
        steps = convert_to_tensor(decay_steps, dtype=rate.dtype)
        exponent = floordiv(step, steps) if staircase else truediv(step, steps)
        return multiply(rate, pow(convert_to_tensor(decay_rate, dtype=rate.dtype), exponent), name=scope)


class Optimizer:
    """compute_gradients + apply_gradients = minimize, as in tf.compat.v1.train.Optimizer."""

    # how much the gradients wait for each other before an update may use them (TF1's values)
    GATE_NONE, GATE_OP, GATE_GRAPH = 0, 1, 2

    def __init__(self, use_locking=False, name="Optimizer"):
        self._name = name
        self._slots = {}  # (slot name, variable) -> slot Variable

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP):
        """[(gradient, variable)] for every trainable variable (gradient None where loss ignores it).

        GATE_OP (the default) releases each op's input gradients together, so no update
        overwrites a variable that another gradient of the same op still reads; GATE_GRAPH
        releases all of them together; GATE_NONE not at all."""
        if gate_gradients not in (self.GATE_NONE, self.GATE_OP, self.GATE_GRAPH):
            raise ValueError(f"gate_gradients must be GATE_NONE, GATE_OP or GATE_GRAPH, not {gate_gradients!r}")
        var_list = list(var_list) if var_list is not None else trainable_variables()
        if not var_list:
            raise ValueError("no variables to optimize: create a tf.Variable, or pass var_list")
        grads = gradients(loss, var_list, gate_gradients=gate_gradients == self.GATE_OP)
        if gate_gradients == self.GATE_GRAPH:
            grads = gradients_released_together(get_default_graph(), grads)
        return list(zip(grads, var_list))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        graph = get_default_graph()
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            names = ", ".join(v.op.name for _, v in grads_and_vars)
            raise ValueError(f"no gradients for any variable ({names}); does the loss depend on them?")
        with graph.control_dependencies(None):  # slots are initialized by the initializer, not here
            self._create_slots([v for _, v in pairs])
        with graph.name_scope(name or self._name) as scope:
            self._prepare()
            updates = [self._apply(g, v) for g, v in pairs]
            finish = self._finish(updates)
            if global_step is None:
                return group(*finish, name=scope)
            with graph.control_dependencies(finish):
                return assign_add(global_step, 1, name=scope).op

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP, name=None):
        return self.apply_gradients(self.compute_gradients(loss, var_list, gate_gradients), global_step, name)

    def get_slot(self, var, name):
        return self._slots.get((name, var))

    def variables(self):
        return list(self._slots.values())

    # -- what each optimizer fills in ----------------------------------------------------
    def _create_slots(self, var_list):
        pass

    def _prepare(self):
        pass

    def _apply(self, grad, var):
        raise NotImplementedError

    def _finish(self, updates):
        return updates

    def _zeros_slot(self, var, slot_name):
        key = (slot_name, var)
        if key not in self._slots:
            self._slots[key] = Variable(zeros(var.shape.as_list(), var.dtype), trainable=False,
                                        name=f"{var.op.name}/{slot_name}")
        return self._slots[key]

    def _hyper(self, value, var, name):
        return convert_to_tensor(value, dtype=var.dtype, name=name)


class GradientDescentOptimizer(Optimizer):
    """var -= learning_rate * gradient, with TF's ApplyGradientDescent op."""

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _apply(self, grad, var):
        return build("ApplyGradientDescent", [var._variable, self._hyper(self._learning_rate, var, "learning_rate"),
                                              grad],
                     default_name=f"update_{var.op.name}/ApplyGradientDescent").outputs[0]


class MomentumOptimizer(Optimizer):
    """accum = momentum * accum + gradient; var -= learning_rate * accum (TF's ApplyMomentum)."""

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum", use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate, self._momentum, self._nesterov = learning_rate, momentum, use_nesterov

    def _create_slots(self, var_list):
        for var in var_list:
            self._zeros_slot(var, self._name)

    def _apply(self, grad, var):
        accum = self.get_slot(var, self._name)
        return build("ApplyMomentum", [var._variable, accum._variable,
                                       self._hyper(self._learning_rate, var, "learning_rate"), grad,
                                       self._hyper(self._momentum, var, "momentum")],
                     default_name=f"update_{var.op.name}/ApplyMomentum",
                     attrs={"use_nesterov": bool(self._nesterov)}).outputs[0]


class AdamOptimizer(Optimizer):
    """Adam (Kingma & Ba) with TF1's ApplyAdam and its beta1_power/beta2_power variables."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False,
                 name="Adam"):
        super().__init__(use_locking, name)
        self._lr, self._beta1, self._beta2, self._epsilon = learning_rate, beta1, beta2, epsilon
        self._powers = None

    def _create_slots(self, var_list):
        first = var_list[0]
        if self._powers is None:
            self._powers = (Variable(self._beta1, trainable=False, name="beta1_power", dtype=first.dtype),
                            Variable(self._beta2, trainable=False, name="beta2_power", dtype=first.dtype))
        for var in var_list:
            self._zeros_slot(var, self._name)
            self._zeros_slot(var, self._name + "_1")

    def _apply(self, grad, var):
        m, v = self.get_slot(var, self._name), self.get_slot(var, self._name + "_1")
        beta1_power, beta2_power = self._powers
        hyper = [self._hyper(x, var, n) for x, n in ((self._lr, "learning_rate"), (self._beta1, "beta1"),
                                                    (self._beta2, "beta2"), (self._epsilon, "epsilon"))]
        return build("ApplyAdam", [var._variable, m._variable, v._variable, beta1_power.value(),
                                   beta2_power.value(), *hyper, grad],
                     default_name=f"update_{var.op.name}/ApplyAdam").outputs[0]

    def _finish(self, updates):
        graph = get_default_graph()
        beta1_power, beta2_power = self._powers
        with graph.control_dependencies(updates):
            step1 = assign(beta1_power, beta1_power.read_value() * self._hyper(self._beta1, beta1_power, "beta1"))
            step2 = assign(beta2_power, beta2_power.read_value() * self._hyper(self._beta2, beta2_power, "beta2"))
        return updates + [step1, step2]
