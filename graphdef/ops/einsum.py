"""Einsum, as TF's kernel runs it: the equation becomes sums, transposes, reshapes and one batched product.

The equation is text from a file: it is parsed by the rules below, never evaluated. One or two
inputs; each label a letter. A label repeated inside one input (a diagonal or a trace) and the
ellipsis are refused with a message, not guessed at. As in TF's op, the output is explicit
(`->`); tf.einsum's implicit form is completed by the builder. The C++ kernel parses by the same rules.
"""

import string
from dataclasses import dataclass

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import tensor_ulps, working_dtype
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops.registry import Attr, build, convert_to_tensor, define
from graphdef.ops import array as array_ops

MAX_EQUATION = 256  # more letters than any tensor has dims (64 each) for one or two inputs
LETTERS = frozenset(string.ascii_letters)
TYPES = frozenset((dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64))


@dataclass(frozen=True)
class Equation:
    inputs: tuple   # one string of labels per input
    output: str

    def plan(self):
        """Label groups of a two-input product: (batch, free_a, contract, free_b)."""
        a, b = self.inputs
        out = self.output
        batch = [c for c in out if c in a and c in b]
        contract = [c for c in a if c in b and c not in out]
        free_a = [c for c in a if c not in b and c in out]
        free_b = [c for c in b if c not in a and c in out]
        return batch, free_a, contract, free_b


def parse(equation, n_inputs):
    """The equation's labels, or ValueError naming what is wrong with it."""
    if isinstance(equation, bytes):
        try:
            equation = equation.decode("ascii")
        except UnicodeDecodeError:
            raise ValueError("equation is not ASCII text") from None
    if len(equation) > MAX_EQUATION:
        raise ValueError(f"equation has {len(equation)} characters, more than {MAX_EQUATION}")
    text = equation.replace(" ", "")
    if "." in text:
        raise ValueError(f"equation {equation!r} uses an ellipsis, which is not supported; name every dim")
    lhs, arrow, rhs = text.partition("->")
    if not arrow:  # as TF's op: tf.einsum's implicit form is made explicit by the builder
        raise ValueError(f"equation {equation!r} needs exactly one '->' before its output labels")
    if "-" in lhs or ">" in lhs or "-" in rhs or ">" in rhs:
        raise ValueError(f"equation {equation!r} is malformed: one '->' at most, between inputs and output")
    inputs = tuple(lhs.split(","))
    if len(inputs) != n_inputs:
        raise ValueError(f"equation {equation!r} names {len(inputs)} inputs, the node has {n_inputs}")
    if n_inputs not in (1, 2):
        raise ValueError(f"Einsum takes one or two inputs, got {n_inputs}")
    for part in inputs + (rhs,):
        bad = sorted(set(part) - LETTERS)
        if bad:
            raise ValueError(f"equation {equation!r} has {''.join(bad)!r}; labels are letters a-z, A-Z")
    for k, part in enumerate(inputs):
        repeated = sorted({c for c in part if part.count(c) > 1})
        if repeated:
            raise ValueError(f"equation {equation!r} repeats {''.join(repeated)!r} in input {k}: diagonals "
                             "and traces are not supported")
    if len(set(rhs)) != len(rhs):
        raise ValueError(f"equation {equation!r} repeats a label in its output")
    missing = sorted(set(rhs) - set("".join(inputs)))
    if missing:
        raise ValueError(f"equation {equation!r}: output labels {''.join(missing)!r} are in no input")
    return Equation(inputs, rhs)


def label_sizes(eq, shapes):
    """Each label's size from the inputs' dims (None where unknown); ValueError when they disagree."""
    sizes = {}
    for k, (labels, dims) in enumerate(zip(eq.inputs, shapes)):
        if dims is None:
            continue
        if len(dims) != len(labels):
            raise ValueError(f"input {k} has shape {show(dims)} ({len(dims)} dims) but the equation gives it "
                             f"{len(labels)} labels {labels!r}")
        for c, d in zip(labels, dims):
            seen = sizes.get(c)
            if d is not None and seen is not None and seen != d:
                raise ValueError(f"label {c!r} is {seen} in one place and {d} in another")
            if d is not None:
                sizes[c] = d
    return sizes


def _infer(ctx):
    try:
        eq = parse(ctx.attrs["equation"], len(ctx.inputs))
        shapes = [ctx.shape(i).dims for i in range(len(ctx.inputs))]
        sizes = label_sizes(eq, shapes)
    except ValueError as e:
        raise ctx.error(str(e)) from None
    return [TensorShape([sizes.get(c) for c in eq.output])]


def _summed_alone(labels, others, out):
    return [c for c in labels if c not in others and c not in out]


def _reduce(x, labels, drop):
    """x with the labels in `drop` summed away."""
    if not drop:
        return x, labels
    axes = tuple(labels.index(c) for c in drop)
    return x.sum(axis=axes, dtype=x.dtype), "".join(c for c in labels if c not in drop)


def _einsum(*inputs, equation):
    arrays = [np.asarray(x) for x in inputs]
    eq = parse(equation, len(arrays))
    sizes = label_sizes(eq, [x.shape for x in arrays])
    dtype = arrays[0].dtype
    out_dims = tuple(sizes[c] for c in eq.output)
    check_size(out_dims, working_dtype(dtype))
    arrays = [x.astype(working_dtype(dtype), copy=False) for x in arrays]
    if len(arrays) == 1:
        x, labels = _reduce(arrays[0], eq.inputs[0], _summed_alone(eq.inputs[0], "", eq.output))
        return np.transpose(x, [labels.index(c) for c in eq.output]).astype(dtype, copy=False)
    (a, la), (b, lb) = (_reduce(arrays[0], eq.inputs[0], _summed_alone(eq.inputs[0], eq.inputs[1], eq.output)),
                        _reduce(arrays[1], eq.inputs[1], _summed_alone(eq.inputs[1], eq.inputs[0], eq.output)))
    batch, free_a, contract, free_b = Equation((la, lb), eq.output).plan()
    a3 = _matrices(a, la, batch, free_a, contract, sizes)
    b3 = _matrices(b, lb, batch, contract, free_b, sizes)
    product = np.matmul(a3, b3).reshape([sizes[c] for c in batch + free_a + free_b])
    order = "".join(batch + free_a + free_b)
    return np.transpose(product, [order.index(c) for c in eq.output]).astype(dtype, copy=False)


def _matrices(x, labels, batch, rows, cols, sizes):
    """x's dims as batch + [rows, cols], each of rows and cols merged into one dim, for np.matmul.

    A transposed view where the strides allow, not a copy: np.matmul hands BLAS any matrix with
    one unit stride (attention's 'BTNH,BSNH->BNTS' reads T x H matrices straight out of BTNH),
    and loops over the batch dims itself, so they need not be merged. Copying the operands into
    one [batch, rows, cols] block first cost more than the products they feed."""
    view = np.transpose(x, [labels.index(c) for c in batch + rows + cols])
    shape = [sizes[c] for c in batch] + [_size(rows, sizes), _size(cols, sizes)]
    try:
        view = np.reshape(view, shape, copy=False)
    except ValueError:  # merging those labels' dims needs a copy
        return np.reshape(np.ascontiguousarray(view), shape)
    return view if _blas_can_read(view) else np.ascontiguousarray(view)


def _size(group, sizes):
    return int(np.prod([sizes[c] for c in group], dtype=np.int64))


def _blas_can_read(m):
    """numpy's own test (is_blasable2d) for handing a matrix to BLAS in place, as it is or
    transposed: one stride of one element, the other a whole number of elements at least a row
    long. Elsewhere np.matmul takes a loop of its own, several times slower than a copy."""
    item = m.itemsize
    rows, cols = m.shape[-2:]
    s_rows, s_cols = m.strides[-2:]
    return ((s_cols == item and s_rows % item == 0 and s_rows // item >= cols)
            or (s_rows == item and s_cols % item == 0 and s_cols // item >= rows))


def _grad(op, g):
    """Each input's gradient is another Einsum; labels summed inside one input are broadcast back."""
    eq = parse(op.attrs["equation"], len(op.inputs))
    grads = []
    for k, x in enumerate(op.inputs):
        labels = eq.inputs[k]
        others = eq.inputs[1 - k] if len(op.inputs) == 2 else ""
        alone = _summed_alone(labels, others, eq.output)
        kept = "".join(c for c in labels if c not in alone)
        operands = [g] + ([op.inputs[1 - k]] if others else [])
        spec = ",".join([eq.output] + ([others] if others else [])) + "->" + kept
        grad = build("Einsum", [operands], default_name="Einsum", attrs={"equation": spec}).outputs[0]
        if alone:
            if not x.shape.is_fully_defined():
                raise ValueError(f"no gradient for '{op.name}' (Einsum {op.attrs['equation']!r}): input {k} sums "
                                 f"labels {''.join(alone)!r} away and its shape {show(x.shape)} is not fully known")
            with_ones = [1 if c in alone else x.shape.dims[i] for i, c in enumerate(labels)]
            grad = array_ops.broadcast_to(array_ops.reshape(grad, with_ones), x.shape.dims)
        grads.append(grad)
    return grads


EINSUM = define(
    "Einsum", "inputs: N*T -> output: T",
    doc="Tensor contraction over labelled dims (one or two inputs, letters only, no diagonals).",
    attrs={"equation": Attr("string"), "N": Attr("int"), "T": Attr("type", allowed=TYPES)},
    infer=_infer, kernel=_einsum, grad=_grad, numerics=tensor_ulps(8))


def einsum(equation, *inputs, name=None):
    """tf.einsum for one or two inputs."""
    tensors = [convert_to_tensor(x) for x in inputs]
    if isinstance(equation, str) and "->" not in equation:  # implicit output: labels seen once, sorted
        joined = equation.replace(" ", "").replace(",", "")
        equation += "->" + "".join(sorted(c for c in set(joined) if joined.count(c) == 1))
    return build("Einsum", [tensors], name=name, default_name="einsum",
                 attrs={"equation": equation}).outputs[0]
