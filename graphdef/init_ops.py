"""Random values and initializers, computed here with a seeded generator and stored as Consts.

No runtime needs a random-number op, so every runtime sees bit-identical weights. Seeds follow
TF1's scheme: a graph seed (set_random_seed) and an op seed; with a graph seed and no op seed,
each random op takes the next number, so a program re-run gives the same values.
"""

import math

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.graph import get_default_graph
from graphdef.ops.state import Variable
from graphdef.ops.array import constant


def set_random_seed(seed):
    """The default graph's seed: random ops made after this are reproducible."""
    graph = get_default_graph()
    graph.seed = seed
    graph._random_ops = 0


def _generator(seed):
    graph = get_default_graph()
    graph_seed = getattr(graph, "seed", None)
    if seed is None and graph_seed is None:
        return np.random.default_rng()
    if seed is None:
        graph._random_ops = getattr(graph, "_random_ops", 0) + 1
        seed = graph._random_ops
    return np.random.default_rng([graph_seed or 0, seed])


def _shape(shape):
    return tuple(int(d) for d in np.ravel(shape)) if not isinstance(shape, int) else (shape,)


def _floating(dtype):
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise TypeError(f"random values need a float dtype, got {dtype.name}")
    return dtype


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name="random_normal"):
    dtype = _floating(dtype)
    values = _generator(seed).normal(mean, stddev, size=_shape(shape))
    return constant(values.astype(dtype.np), name=name)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name="truncated_normal"):
    """Normal values, redrawn wherever they fall more than two standard deviations out."""
    dtype = _floating(dtype)
    rng = _generator(seed)
    values = rng.standard_normal(size=_shape(shape))
    outside = np.abs(values) > 2
    while outside.any():
        values[outside] = rng.standard_normal(size=int(outside.sum()))
        outside = np.abs(values) > 2
    return constant((values * stddev + mean).astype(dtype.np), name=name)


def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name="random_uniform"):
    dtype = dtypes.as_dtype(dtype)
    rng = _generator(seed)
    if dtype.is_integer:
        if maxval is None:
            raise ValueError("random_uniform: an integer dtype needs maxval")
        values = rng.integers(minval, maxval, size=_shape(shape))
    else:
        values = rng.uniform(minval, 1.0 if maxval is None else maxval, size=_shape(shape))
    return constant(values.astype(dtype.np), name=name)


def _fans(shape):
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = math.prod(shape[:-2])
    return shape[-2] * receptive, shape[-1] * receptive


class Initializer:
    """Called with (shape, dtype) to give the initial value of a variable."""

    def __init__(self, make, dtype=dtypes.float32):
        self._make, self.dtype = make, dtype

    def __call__(self, shape, dtype=None, partition_info=None):
        return self._make(_shape(shape), dtypes.as_dtype(dtype or self.dtype))


def zeros_initializer(dtype=dtypes.float32):
    return Initializer(lambda shape, dtype: constant(np.zeros(shape, dtype.np), name="zeros"), dtype)


def ones_initializer(dtype=dtypes.float32):
    return Initializer(lambda shape, dtype: constant(np.ones(shape, dtype.np), name="ones"), dtype)


def constant_initializer(value=0, dtype=dtypes.float32):
    return Initializer(lambda shape, dtype: constant(value, dtype=dtype, shape=shape), dtype)


def random_normal_initializer(mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
    return Initializer(lambda shape, dtype: random_normal(shape, mean, stddev, dtype, seed), dtype)


def truncated_normal_initializer(mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
    return Initializer(lambda shape, dtype: truncated_normal(shape, mean, stddev, dtype, seed), dtype)


def random_uniform_initializer(minval=0, maxval=None, seed=None, dtype=dtypes.float32):
    return Initializer(lambda shape, dtype: random_uniform(shape, minval, maxval, dtype, seed), dtype)


def glorot_uniform_initializer(seed=None, dtype=dtypes.float32):
    """Uniform in +-sqrt(6 / (fan_in + fan_out)): TF1's default for get_variable."""
    def make(shape, dtype):
        fan_in, fan_out = _fans(shape)
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        return random_uniform(shape, -limit, limit, dtype, seed, name="glorot_uniform")
    return Initializer(make, dtype)


def glorot_normal_initializer(seed=None, dtype=dtypes.float32):
    """Truncated normal with stddev sqrt(2 / (fan_in + fan_out)) / 0.8796 (the truncation's correction)."""
    def make(shape, dtype):
        fan_in, fan_out = _fans(shape)
        stddev = math.sqrt(2.0 / (fan_in + fan_out)) / 0.87962566103423978
        return truncated_normal(shape, 0.0, stddev, dtype, seed, name="glorot_normal")
    return Initializer(make, dtype)


class _AutoReuse:
    def __repr__(self):
        return "tf.AUTO_REUSE"


AUTO_REUSE = _AutoReuse()  # get_variable returns the variable if it exists, else creates it


class _VariableScope:
    """What variable_scope gives `as`: its name and reuse setting."""

    def __init__(self, name, reuse):
        self.name, self.reuse = name, reuse


def _scopes(graph):
    if not hasattr(graph, "_variable_scopes"):
        graph._variable_scopes = [_VariableScope("", None)]
        graph._named_variables = {}
    return graph._variable_scopes


def get_variable_scope():
    return _scopes(get_default_graph())[-1]


class variable_scope:  # noqa: N801 - TF's name for a context manager
    """Names get_variable's variables `scope/name` and sets whether they may be reused.

    It also opens a name scope of the same name for the ops built inside, as TF1 does.
    """

    def __init__(self, name_or_scope, default_name=None, values=None, reuse=None):
        name = name_or_scope.name if isinstance(name_or_scope, _VariableScope) else (name_or_scope or default_name)
        if not name:
            raise ValueError("variable_scope needs a name")
        self._name, self._reuse = name, reuse

    def __enter__(self):
        graph = get_default_graph()
        scopes = _scopes(graph)
        parent = scopes[-1]
        full = f"{parent.name}/{self._name}" if parent.name else self._name
        reuse = self._reuse if self._reuse is not None else parent.reuse
        scope = _VariableScope(full, reuse)
        scopes.append(scope)
        self._names = graph.name_scope(self._name)
        self._names.__enter__()
        return scope

    def __exit__(self, *exc):
        self._names.__exit__(*exc)
        _scopes(get_default_graph()).pop()
        return False


def get_variable(name, shape=None, dtype=dtypes.float32, initializer=None, trainable=True):
    """The variable `scope/name` of the current variable_scope, made (glorot-uniform by default) or reused.

    Name scopes do not prefix it, as in TF1. Reusing needs variable_scope(reuse=True or
    AUTO_REUSE); making one that exists, or reusing one that does not, is an error.
    """
    graph = get_default_graph()
    scope = _scopes(graph)[-1]
    full = f"{scope.name}/{name}" if scope.name else name
    existing = graph._named_variables.get(full)
    if existing is not None:
        if scope.reuse in (True, AUTO_REUSE):
            return existing
        raise ValueError(f"Variable {full} already exists, disallowed; did you mean to set reuse=True or "
                         f"reuse=tf.AUTO_REUSE in variable_scope?")
    if scope.reuse is True:
        raise ValueError(f"Variable {full} does not exist, or was not created with tf.get_variable(); "
                         f"did you mean to set reuse=tf.AUTO_REUSE in variable_scope?")
    dtype = dtypes.as_dtype(dtype)
    if initializer is None:
        initializer = glorot_uniform_initializer() if dtype.is_floating else zeros_initializer()
    if isinstance(initializer, Initializer):
        if shape is None:
            raise ValueError(f"get_variable('{full}'): an initializer needs a shape")
        with graph.name_scope(full + "/Initializer/"):  # absolute: name scopes do not apply
            initial = initializer(shape, dtype)
    else:
        initial = initializer
    variable = Variable(initial, trainable=trainable, name=full + "/", dtype=dtype)
    graph._named_variables[full] = variable
    return variable
