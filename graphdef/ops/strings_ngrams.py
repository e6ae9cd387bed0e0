"""StringNGrams: the n-grams of each row of a ragged batch of tokens, as tf.strings.ngrams builds them.

Rows are given TensorFlow's ragged way, a flat `data` and `data_splits` (row i is
data[splits[i]:splits[i+1]]). Padding follows TF's kernel: pad_width -1 pads each width w with
w - 1 pads, and no n-gram is ever padded on one side by more than w - 1.
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.errors import InvalidArgumentError
from graphdef.framework.numerics import EXACT
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, define
from graphdef.ops.strings import as_array, check_string_bytes, strings_like


def _pad_width(width, pad_width):
    return min(width - 1 if pad_width < 0 else pad_width, width - 1)


def _count(length, width, pad_width):
    return max(0, length + 2 * _pad_width(width, pad_width) - width + 1)


def _ngrams(tokens, count, width, pad_width, pieces):
    left_pad, right_pad, sep = pieces
    pad = _pad_width(width, pad_width)
    out = []
    for index in range(count):
        left = max(0, pad - index)
        right = max(0, pad - (count - (index + 1)))
        n = width - left - right
        start = 0 if left > 0 else index - pad
        out.append(sep.join([left_pad] * left + tokens[start:start + n] + [right_pad] * right))
    return out


def _check_splits(splits, size):
    if splits.ndim != 1 or splits.size < 1:
        raise InvalidArgumentError(f"Input data_splits must be a vector, got shape {show(TensorShape(splits.shape))}")
    values = splits.tolist()
    if values[0] != 0:
        raise InvalidArgumentError(f"First split value must be 0, got {values[0]}")
    if values[-1] != size:
        raise InvalidArgumentError(f"Last split value must be data size. Expected {size}, got {values[-1]}")
    for a, b in zip(values, values[1:]):
        if b < a:
            raise InvalidArgumentError(f"Invalid split value {b}, must be >= {a}")
    return values


def _string_ngrams(data, data_splits, *, separator, ngram_widths, left_pad, right_pad, pad_width,
                   preserve_short_sequences):
    tokens = as_array(data)
    if tokens.ndim != 1:
        raise InvalidArgumentError(f"Input data must be a vector, got shape {show(TensorShape(tokens.shape))}")
    splits_array = as_array(data_splits)
    splits = _check_splits(splits_array, tokens.size)
    flat = tokens.tolist()
    pieces = tuple(v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in (left_pad, right_pad, separator))
    longest = max(map(len, flat), default=0) + max(len(pieces[0]), len(pieces[1]))
    out, out_splits = [], [0]
    for start, end in zip(splits, splits[1:]):
        row = flat[start:end]
        made = 0
        for width in ngram_widths:
            count = _count(len(row), width, pad_width)
            check_string_bytes((len(out) + count) * (width * (longest + len(pieces[2]))))
            out += _ngrams(row, count, width, pad_width, pieces)
            made += count
        if preserve_short_sequences and made == 0 and row:
            out += _ngrams(row, 1, len(row) + 2 * pad_width, pad_width, pieces)
        out_splits.append(len(out))
    return strings_like((len(out),), out), np.array(out_splits, dtype=splits_array.dtype)


def _infer_ngrams(ctx):
    if any(w < 1 for w in ctx.attrs["ngram_widths"]):
        raise ctx.error(f"attr 'ngram_widths' must hold widths of at least 1, got {list(ctx.attrs['ngram_widths'])}")
    return [TensorShape([None]), TensorShape([None])]


STRING_NGRAMS = define(
    "StringNGrams", "data: string, data_splits: Tsplits -> ngrams: string, ngrams_splits: Tsplits",
    doc="The n-grams of each ragged row of tokens for each width, joined with separator, padded as asked.",
    attrs={"separator": Attr("string"), "ngram_widths": Attr("list(int)"), "left_pad": Attr("string"),
           "right_pad": Attr("string"), "pad_width": Attr("int"), "preserve_short_sequences": Attr("bool"),
           "Tsplits": Attr("type", dtypes.int64, dtypes.INDEX)},
    infer=_infer_ngrams, kernel=_string_ngrams, grad=NOT_DIFFERENTIABLE, numerics=EXACT)

