"""ReverseSequence: each batch entry's first seq_lengths[b] steps reversed (bidirectional_dynamic_rnn)."""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.numerics import EXACT
from graphdef.framework.shapes import show
from graphdef.ops.registry import Attr, build, define


def _dims(rank, seq_dim, batch_dim):
    if seq_dim == batch_dim:
        raise ValueError(f"batch_dim == seq_dim == {seq_dim}")
    if not 0 <= seq_dim < rank:
        raise ValueError(f"seq_dim must be < input rank ( {seq_dim} vs. {rank})")
    if not 0 <= batch_dim < rank:
        raise ValueError(f"batch_dim must be < input rank ( {batch_dim} vs. {rank})")


def _reverse_sequence(input, seq_lengths, *, seq_dim, batch_dim):  # noqa: A002 - TF's name
    x, lengths = np.asarray(input), np.asarray(seq_lengths)
    _dims(x.ndim, seq_dim, batch_dim)
    if lengths.ndim != 1:
        raise ValueError(f"seq_lengths must be 1-dim, not {lengths.ndim}")
    if lengths.shape[0] != x.shape[batch_dim]:
        raise ValueError(f"Length of seq_lengths != input.dims({batch_dim}), ({lengths.shape[0]} vs. "
                         f"{x.shape[batch_dim]})")
    bad = np.flatnonzero((lengths < 0) | (lengths > x.shape[seq_dim]))
    if bad.size:
        b = int(bad[0])
        raise ValueError(f"seq_lens({b}) < 0" if lengths[b] < 0 else f"seq_lens({b}) > input.dims({seq_dim})")
    # step t of batch entry b reads step n_b - 1 - t below n_b, else t: one gather along the sequence
    steps = np.arange(x.shape[seq_dim], dtype=np.int64)[None, :]
    n = lengths.astype(np.int64)[:, None]
    source = np.where(steps < n, n - 1 - steps, steps)                    # [batch, seq]
    moved = np.moveaxis(x, (batch_dim, seq_dim), (0, 1))
    index = source.reshape(source.shape + (1,) * (moved.ndim - 2))
    out = np.take_along_axis(moved, np.broadcast_to(index, moved.shape), axis=1)
    return np.ascontiguousarray(np.moveaxis(out, (0, 1), (batch_dim, seq_dim)))


def _infer(ctx):
    x, lengths = ctx.shape(0), ctx.shape(1)
    if x.ndims is not None:
        try:
            _dims(x.ndims, ctx.attrs["seq_dim"], ctx.attrs["batch_dim"])
        except ValueError as e:
            raise ctx.error(str(e)) from None
        if lengths.ndims not in (None, 1):
            raise ctx.error(f"seq_lengths must be 1-dim, got shape {show(lengths)}")
        batch = x.dims[ctx.attrs["batch_dim"]]
        if lengths.ndims == 1 and None not in (batch, lengths.dims[0]) and batch != lengths.dims[0]:
            raise ctx.error(f"Length of seq_lengths != input.dims({ctx.attrs['batch_dim']}), ({lengths.dims[0]} vs. "
                            f"{batch})")
    return [x]


REVERSE_SEQUENCE = define(
    "ReverseSequence", "input: T, seq_lengths: Tlen -> output: T",
    doc="Along seq_dim, the first seq_lengths[b] entries of each batch_dim slice b reversed, the rest kept.",
    attrs={"seq_dim": Attr("int"), "batch_dim": Attr("int", 0), "T": Attr("type"),
           "Tlen": Attr("type", dtypes.int64, frozenset((dtypes.int32, dtypes.int64)))},
    infer=_infer, kernel=_reverse_sequence,
    grad=lambda op, g: [reverse_sequence(g, op.inputs[1], op.attrs["seq_dim"], op.attrs["batch_dim"]), None],
    numerics=EXACT)


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None, seq_dim=None,  # noqa: A002
                     batch_dim=None):
    """tf.reverse_sequence (seq_axis/batch_axis, or TF1's seq_dim/batch_dim)."""
    seq = seq_axis if seq_axis is not None else seq_dim
    if seq is None:
        raise TypeError("reverse_sequence: give seq_axis")
    batch = batch_axis if batch_axis is not None else (batch_dim if batch_dim is not None else 0)
    return build("ReverseSequence", [input, seq_lengths], name=name, default_name="ReverseSequence",
                 attrs={"seq_dim": int(seq), "batch_dim": int(batch)}).outputs[0]
