"""tf.strings: the string ops' builders (graphdef/ops/strings*.py)."""

from graphdef.ops.registry import build
from graphdef.ops.sparse import SparseTensor

from graphdef.ops.strings import (decode_base64, encode_base64, join, length, lower, split_v2, strip, substr,  # noqa: F401
                                  to_number, upper)
from graphdef.ops.strings_hash import to_hash_bucket_fast, to_hash_bucket_strong  # noqa: F401
from graphdef.ops.strings_reduce import reduce_join  # noqa: F401
from graphdef.ops.strings_print import as_string, string_format as format  # noqa: A004, F401
from graphdef.ops.strings_regex import regex_full_match, regex_replace  # noqa: F401


def split(input, sep=None, maxsplit=-1, name=None):  # noqa: A002 - TF's argument name
    """StringSplitV2 of a vector as a tf.SparseTensor, as tf.compat.v1.strings.split gives it (TF2 gives a
    RaggedTensor, which graphdef has not)."""
    return SparseTensor(*split_v2(input, sep=sep, maxsplit=maxsplit, name=name))


def string_split(source, delimiter=" ", skip_empty=True, name=None):
    """TF1's tf.string_split: StringSplit (any byte of delimiter splits) as a tf.SparseTensor."""
    op = build("StringSplit", [source, delimiter], name=name, default_name="StringSplit",
               attrs={"skip_empty": skip_empty})
    return SparseTensor(*op.outputs)
