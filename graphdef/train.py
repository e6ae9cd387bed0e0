"""tf.train: optimizers that build their update step into the graph."""

from graphdef.gradients import gradients
from graphdef.graph import get_default_graph
from graphdef.ops.array import group
from graphdef.ops.registry import build, convert_to_tensor
from graphdef.ops.state import assign_add, trainable_variables
from graphdef.serialize import write_graph  # noqa: F401 - TF1 kept write_graph here too


class Optimizer:
    """compute_gradients + apply_gradients = minimize, as in tf.compat.v1.train.Optimizer."""

    def __init__(self, use_locking=False, name="Optimizer"):
        self._name = name

    def compute_gradients(self, loss, var_list=None):
        """[(gradient, variable)] for every trainable variable (gradient None where loss ignores it)."""
        var_list = list(var_list) if var_list is not None else trainable_variables()
        if not var_list:
            raise ValueError("no variables to optimize: create a tf.Variable, or pass var_list")
        grads = gradients(loss, var_list)
        return list(zip(grads, var_list))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        graph = get_default_graph()
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            names = ", ".join(v.op.name for _, v in grads_and_vars)
            raise ValueError(f"no gradients for any variable ({names}); does the loss depend on them?")
        with graph.name_scope(name or self._name) as scope:
            updates = [self._apply(g, v) for g, v in pairs]
            if global_step is None:
                return group(*updates, name=scope)
            with graph.control_dependencies(updates):
                return assign_add(global_step, 1, name=scope).op

    def minimize(self, loss, global_step=None, var_list=None, name=None):
        return self.apply_gradients(self.compute_gradients(loss, var_list), global_step, name)

    def _apply(self, grad, var):
        raise NotImplementedError


class GradientDescentOptimizer(Optimizer):
    """var -= learning_rate * gradient, with TF's ApplyGradientDescent op."""

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _apply(self, grad, var):
        rate = convert_to_tensor(self._learning_rate, dtype=var.dtype, name="learning_rate")
        return build("ApplyGradientDescent", [var._variable, rate, grad],
                     default_name=f"update_{var.op.name}/ApplyGradientDescent").outputs[0]
