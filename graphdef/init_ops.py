"""Random values and initializers, computed here with a seeded generator and stored as Consts.

No runtime needs a random-number op, so every runtime sees bit-identical weights. Seeds follow
TF1's scheme: a graph seed (set_random_seed) and an op seed; with a graph seed and no op seed,
each random op takes the next number, so a program re-run gives the same values.
"""

import math

import numpy as np

from graphdef import dtypes
from graphdef.graph import get_default_graph
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


def get_variable(name, shape=None, dtype=dtypes.float32, initializer=None, trainable=True):
    """A new Variable `name` in the current scope, by default glorot-uniform initialised.

    Variable sharing (variable_scope(reuse=True)) is not supported: a second variable of
    the same name is an error, as TF1 reports without reuse.
    """
    from graphdef.ops.state import Variable
    graph = get_default_graph()
    scope = graph.get_name_scope()
    full = f"{scope}/{name}" if scope else name
    if full in graph._ops:
        raise ValueError(f"Variable {full} already exists (variable sharing is not supported)")
    dtype = dtypes.as_dtype(dtype)
    if initializer is None:
        initializer = glorot_uniform_initializer() if dtype.is_floating else zeros_initializer()
    if isinstance(initializer, Initializer):
        if shape is None:
            raise ValueError(f"get_variable('{name}'): an initializer needs a shape")
        with graph.name_scope(name + "/Initializer"):
            initial = initializer(shape, dtype)
    else:
        initial = initializer
    variable = Variable(initial, trainable=trainable, name=name, dtype=dtype)
    if variable.op.name != full:
        raise ValueError(f"Variable {full} already exists (variable sharing is not supported)")
    return variable
