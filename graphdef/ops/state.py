"""Variables: VariableV2 and the Assign ops that write it, plus the tf.Variable class.

A variable's value lives in the Session (its `state`), keyed by the VariableV2 node's
name. A ref input (Assign's first) names the variable instead of reading it, so an
initializer can run before the variable has a value.
"""

import numpy as np

from graphdef.framework.errors import FailedPreconditionError
from graphdef.framework.graph import Tensor, get_default_graph
from graphdef.ops import math as math_ops
from graphdef.ops.array import frozen, group, identity
from graphdef.framework.numerics import EXACT, elementwise_ulps
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, build, convert_to_tensor, define
from graphdef.framework.shapes import show
from graphdef.framework import dtypes


def _read(*, state, node):
    try:
        return state[node]
    except KeyError:
        raise FailedPreconditionError(
            f"variable '{node}' is not initialized; run its initializer first") from None


VARIABLE_V2 = define(
    "VariableV2", "-> ref: Ref(dtype)",
    doc="A tensor whose value persists across Session.run calls.",
    attrs={"shape": Attr("shape"), "dtype": Attr("type"), "container": Attr("string", ""),
           "shared_name": Attr("string", "")},
    infer=lambda ctx: [ctx.attrs["shape"]], kernel=_read, stateful=True, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _infer_assign(ctx):
    var, value = ctx.shape(0), ctx.shape(1)
    if ctx.attrs.get("validate_shape", True) and not var.is_compatible_with(value):
        raise ctx.error(f"cannot assign a value of shape {show(value)} to variable "
                        f"'{ctx.inputs[0].op.name}' of shape {show(var)}")
    return [var if ctx.attrs.get("validate_shape", True) else value]


def _sealed(fresh):
    """A value this kernel just computed: nothing else holds it, so seal it without a copy."""
    fresh = np.asarray(fresh)
    if fresh.base is not None or not fresh.flags.owndata:  # a view: it may alias something else
        return frozen(fresh)
    fresh.flags.writeable = False
    return fresh


def _assign(value, *, state, ref):
    state[ref] = stored = frozen(value)
    return stored


def _updater(combine):
    def kernel(value, *, state, ref):
        state[ref] = stored = _sealed(combine(_read(state=state, node=ref), value))
        return stored
    return kernel


ASSIGN = define(
    "Assign", "ref: Ref(T), value: T -> output_ref: Ref(T)",
    doc="Sets the variable to `value` (it need not be initialized yet) and returns the new value.",
    attrs={"T": Attr("type"), "validate_shape": Attr("bool", True), "use_locking": Attr("bool", True)},
    infer=_infer_assign, kernel=_assign, stateful=True, grad=NOT_DIFFERENTIABLE, numerics=EXACT)

ASSIGN_ADD = define(
    "AssignAdd", "ref: Ref(T), value: T -> output_ref: Ref(T)",
    doc="Adds `value` to the variable and returns the new value.",
    attrs={"T": Attr("type", allowed=dtypes.NUMERIC), "use_locking": Attr("bool", False)},
    infer=_infer_assign, kernel=_updater(np.add), stateful=True, grad=NOT_DIFFERENTIABLE, numerics=EXACT)

ASSIGN_SUB = define(
    "AssignSub", "ref: Ref(T), value: T -> output_ref: Ref(T)",
    doc="Subtracts `value` from the variable and returns the new value.",
    attrs={"T": Attr("type", allowed=dtypes.NUMERIC), "use_locking": Attr("bool", False)},
    infer=_infer_assign, kernel=_updater(np.subtract), stateful=True, grad=NOT_DIFFERENTIABLE, numerics=EXACT)



def _infer_update(ctx, delta, scalars):
    """An optimizer update: `delta` has the variable's shape, the hyper-parameters are scalars."""
    var = ctx.shape(0)
    if not var.is_compatible_with(ctx.shape(delta)):
        raise ctx.error(f"update of shape {show(ctx.shape(delta))} for variable "
                        f"'{ctx.inputs[0].op.name}' of shape {show(var)}")
    for i in scalars:
        if ctx.shape(i).ndims not in (None, 0):
            raise ctx.error(f"input {i} must be a scalar, got shape {show(ctx.shape(i))}")
    return [var]


def _check_update(var_name, var, delta, *scalars, slots=()):
    """Run-time twin of _infer_update, for shapes only known when fed."""
    for slot_name, slot in slots:
        if np.shape(slot) != np.shape(var):
            raise ValueError(f"slot '{slot_name}' of shape {show(np.shape(slot))} does not match "
                             f"variable '{var_name}' of shape {show(np.shape(var))}")
    if np.shape(delta) != np.shape(var):
        raise ValueError(f"update of shape {show(np.shape(delta))} for variable '{var_name}' "
                         f"of shape {show(np.shape(var))}")
    for s in scalars:
        if np.ndim(s) != 0:
            raise ValueError(f"hyper-parameters must be scalars, got shape {show(np.shape(s))}")


def _apply_gradient_descent(alpha, delta, *, state, ref):
    _check_update(ref, _read(state=state, node=ref), delta, alpha)
    step = np.multiply(delta, alpha)
    var = _read(state=state, node=ref)
    if type(step) is np.ndarray and step.shape == np.shape(var):  # reuse the step's buffer: one allocation
        state[ref] = stored = _sealed(np.subtract(var, step, out=step))
    else:  # scalars travel as numpy scalars, which have no buffer to reuse
        state[ref] = stored = _sealed(var - step)
    return stored


APPLY_GRADIENT_DESCENT = define(
    "ApplyGradientDescent", "var: Ref(T), alpha: T, delta: T -> out: Ref(T)",
    doc="var -= alpha * delta, returning the new value.",
    attrs={"T": Attr("type", allowed=dtypes.NUMERIC), "use_locking": Attr("bool", False)},
    infer=lambda ctx: _infer_update(ctx, delta=2, scalars=(1,)), kernel=_apply_gradient_descent,
    stateful=True, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _apply_momentum(lr, grad, momentum, *, state, refs, use_nesterov):
    var_name, accum_name = refs
    _check_update(var_name, _read(state=state, node=var_name), grad, lr, momentum,
                  slots=[(accum_name, _read(state=state, node=accum_name))])
    accum = _read(state=state, node=accum_name) * momentum + grad
    step = grad * lr + accum * momentum * lr if use_nesterov else accum * lr  # TF's order of rounding
    state[accum_name] = _sealed(accum)
    state[var_name] = stored = _sealed(_read(state=state, node=var_name) - step)
    return stored


APPLY_MOMENTUM = define(
    "ApplyMomentum", "var: Ref(T), accum: Ref(T), lr: T, grad: T, momentum: T -> out: Ref(T)",
    doc="accum = accum * momentum + grad; var -= lr * accum (Nesterov: lr * grad + lr * momentum * accum).",
    attrs={"T": Attr("type", allowed=dtypes.NUMERIC), "use_locking": Attr("bool", False),
           "use_nesterov": Attr("bool", False)},
    infer=lambda ctx: _infer_update(ctx, delta=3, scalars=(2, 4)), kernel=_apply_momentum,
    stateful=True, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _apply_adam(beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad, *, state, refs, use_nesterov):
    var_name, m_name, v_name = refs
    _check_update(var_name, _read(state=state, node=var_name), grad, beta1_power, beta2_power, lr, beta1, beta2,
                  epsilon, slots=[(m_name, _read(state=state, node=m_name)), (v_name, _read(state=state, node=v_name))])
    lr_t = lr * np.sqrt(1 - beta2_power) / (1 - beta1_power)
    m = beta1 * _read(state=state, node=m_name) + (1 - beta1) * grad
    v = beta2 * _read(state=state, node=v_name) + (1 - beta2) * grad * grad
    direction = beta1 * m + (1 - beta1) * grad if use_nesterov else m
    state[m_name], state[v_name] = _sealed(m), _sealed(v)
    state[var_name] = stored = _sealed(_read(state=state, node=var_name) - lr_t * direction / (np.sqrt(v) + epsilon))
    return stored


APPLY_ADAM = define(
    "ApplyAdam", "var: Ref(T), m: Ref(T), v: Ref(T), beta1_power: T, beta2_power: T, lr: T, beta1: T, "
                 "beta2: T, epsilon: T, grad: T -> out: Ref(T)",
    doc="Adam: m, v moving averages of grad and grad**2; var -= lr * sqrt(1-b2^t)/(1-b1^t) * m/(sqrt(v)+eps).",
    attrs={"T": Attr("type", allowed=dtypes.FLOATS), "use_locking": Attr("bool", False),
           "use_nesterov": Attr("bool", False)},
    infer=lambda ctx: _infer_update(ctx, delta=9, scalars=(3, 4, 5, 6, 7, 8)), kernel=_apply_adam,
    stateful=True, grad=NOT_DIFFERENTIABLE, numerics=elementwise_ulps(4))


class Variable:
    """tf.compat.v1.Variable: VariableV2 `name`, its `name/Assign` initializer and `name/read` value."""

    def __init__(self, initial_value=None, trainable=True, name=None, dtype=None, validate_shape=True,
                 collections=None):
        if initial_value is None:
            raise ValueError("Variable needs an initial_value")
        graph = get_default_graph()
        with graph.name_scope(name or "Variable") as scope:
            if callable(initial_value):
                initial_value = initial_value()
            init = convert_to_tensor(initial_value, dtype=dtype, name="initial_value")
            if validate_shape and not init.shape.is_fully_defined():
                raise ValueError(f"Variable '{scope[:-1]}': initial value '{init.name}' has shape "
                                 f"{show(init.shape)}; a fully defined shape is needed (or validate_shape=False)")
            self._variable = build("VariableV2", [], name=scope,
                                   attrs={"shape": init.shape, "dtype": init.dtype}).outputs[0]
            self._initializer_op = build("Assign", [self._variable, init], name="Assign",
                                         attrs={"validate_shape": bool(validate_shape)})
            self._snapshot = identity(self._variable, name="read")
        self._initial_value = init
        self.trainable = bool(trainable)
        graph._variables.append(self)

    # the Tensor-like surface
    def _to_tensor(self):
        return self._snapshot

    def _as_graph_element(self):
        return self._snapshot

    name = property(lambda self: self._variable.name)
    op = property(lambda self: self._variable.op)
    graph = property(lambda self: self._variable.graph)
    dtype = property(lambda self: self._variable.dtype)
    shape = property(lambda self: self._variable.shape)
    initializer = property(lambda self: self._initializer_op)
    initial_value = property(lambda self: self._initial_value)

    def get_shape(self):
        return self.shape

    def value(self):
        """The `name/read` snapshot made with the variable."""
        return self._snapshot

    def read_value(self):
        """A new read, made under the current control dependencies (so it can follow an update)."""
        return identity(self._variable, name="read")

    def assign(self, value, use_locking=False, name=None, read_value=True):
        return assign(self, value, name=name)

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        return assign_add(self, delta, name=name)

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        return assign_sub(self, delta, name=name)

    def eval(self, session=None):
        return self._snapshot.eval(session=session)

    def load(self, value, session=None):
        from graphdef.client.session import default_session_for
        sess = default_session_for(self.graph, session)
        sess._variables[self.op.name] = frozen(np.asarray(value, dtype=self.dtype.np))

    def __repr__(self):
        return f"<tf.Variable '{self.name}' shape={show(self.shape)} dtype={self.dtype.name}>"

    __hash__ = object.__hash__


def _delegate(method):
    return lambda self, *args: getattr(self._snapshot, method)(*args)


for _m in ("add", "sub", "mul", "truediv", "pow", "matmul"):
    for _name in (f"__{_m}__", f"__r{_m}__"):
        setattr(Variable, _name, _delegate(_name))
Variable.__neg__ = _delegate("__neg__")
Variable.__abs__ = _delegate("__abs__")


def _ref(var):
    if isinstance(var, Variable):
        return var._variable
    if isinstance(var, Tensor) and var.op.type == "VariableV2":
        return var
    raise TypeError(f"expected a Variable, got {var!r}")


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    attrs = {} if validate_shape is None else {"validate_shape": bool(validate_shape)}
    return build("Assign", [_ref(ref), value], name=name, default_name="Assign", attrs=attrs).outputs[0]


def assign_add(ref, value, use_locking=None, name=None):
    return build("AssignAdd", [_ref(ref), value], name=name, default_name="AssignAdd").outputs[0]


def assign_sub(ref, value, use_locking=None, name=None):
    return build("AssignSub", [_ref(ref), value], name=name, default_name="AssignSub").outputs[0]


def global_variables(scope=None):
    return [v for v in get_default_graph()._variables if scope is None or v.op.name.startswith(scope)]


def trainable_variables(scope=None):
    return [v for v in global_variables(scope) if v.trainable]


def variables_initializer(var_list, name="init"):
    """One op that runs the initializers of `var_list`."""
    return group(*[v.initializer for v in var_list], name=name)


def global_variables_initializer():
    return variables_initializer(global_variables())


_ = math_ops  # Tensor operators must be installed before Variable delegates to them
