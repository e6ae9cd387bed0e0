"""RandomUniform, for the dropout leftovers frozen TensorFlow graphs carry.

graphdef's own random values are computed in Python and stored as constants; this op
exists so TensorFlow-made graphs that still hold one can run. Its values come from the
generator of graphdef.framework.random_feeds (spelled out so the C++ runner draws the same ones),
seeded by the node's seed, seed2 and name: the same values on every run, in every runtime.
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import EXACT
from graphdef.ops.registry import (Attr, NOT_DIFFERENTIABLE, check_dims_value, check_dims_vector, constant_value,
                                   define)
from graphdef.framework.random_feeds import words
from graphdef.framework.shapes import TensorShape

_CHUNK = 1 << 20  # words made at once
_SIGNIFICAND = {np.dtype(np.float16): 11, np.dtype(np.float32): 24, np.dtype(np.float64): 53}


def _infer_random_uniform(ctx):
    check_dims_vector(ctx, 0, "shape")
    shape = constant_value(ctx.inputs[0])
    if shape is not None:
        return [TensorShape([int(d) for d in np.ravel(shape)])]
    n = ctx.shape(0)[0] if ctx.shape(0).ndims == 1 else None
    return [TensorShape(None if n is None else [None] * n)]


def _random_uniform(shape, *, dtype, seed, seed2, node):
    check_dims_value(shape)
    dims = tuple(int(d) for d in np.ravel(shape))
    if any(d < 0 for d in dims):
        raise ValueError(f"shape {list(dims)} must not be negative")
    check_size(dims, dtype.np)
    bits = _SIGNIFICAND[dtype.np]
    stream = ((seed & 0xFFFFFFFF) << 32) | (seed2 & 0xFFFFFFFF)
    count = int(np.prod(dims))
    out = np.empty(count, dtype.np)
    # made a chunk at a time: the uint64 and float64 temporaries of a whole large output take many
    # times its size, all page-faulted in; each chunk is the same stream, so values are unchanged
    for first in range(0, count, _CHUNK):
        n = min(_CHUNK, count - first)
        mantissas = words(stream, node, n, first) >> np.uint64(64 - bits)
        out[first:first + n] = mantissas.astype(np.float64) * 2.0 ** -bits  # [0, 1), exact
    return out.reshape(dims)


RANDOM_UNIFORM = define(
    "RandomUniform", "shape: T -> output: dtype",
    doc="Uniform values in [0, 1) of the given shape, the same on every run (seeded by seed, seed2, node name).",
    attrs={"seed": Attr("int", 0), "seed2": Attr("int", 0), "dtype": Attr("type", allowed=dtypes.FLOATS),
           "T": Attr("type", allowed=dtypes.INDEX)},
    infer=_infer_random_uniform, kernel=_random_uniform, stateful=True, grad=NOT_DIFFERENTIABLE, numerics=EXACT)
