"""tf.strings: the string ops' builders (graphdef/ops/strings*.py)."""

from graphdef.ops.strings import (decode_base64, encode_base64, join, length, lower, split_v2, strip, substr,  # noqa: F401
                                  to_number, upper)
from graphdef.ops.strings_hash import to_hash_bucket_fast, to_hash_bucket_strong  # noqa: F401
from graphdef.ops.strings_reduce import reduce_join  # noqa: F401
from graphdef.ops.strings_print import as_string, string_format as format  # noqa: A004, F401
from graphdef.ops.strings_regex import regex_full_match, regex_replace  # noqa: F401


def split(input, sep=None, maxsplit=-1, name=None):  # noqa: A002 - TF's argument name
    """StringSplitV2 of a vector: the (indices, values, dense_shape) of the sparse result (TF gives a
    RaggedTensor; graphdef has none, so the three tensors TF builds it from)."""
    return split_v2(input, sep=sep, maxsplit=maxsplit, name=name)
