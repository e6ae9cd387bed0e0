"""The string ops' declarations against TensorFlow's OpDefs, by the same rule as tests/python/ops/test_opdefs.py."""

import pytest

from graphdef.ops import REGISTRY, strings, strings_hash, strings_ngrams, strings_print, strings_reduce, strings_regex
from tests.python.ops.test_opdefs import test_declaration_matches_tensorflow as declaration_matches
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture

MODULES = (strings, strings_hash, strings_ngrams, strings_print, strings_reduce, strings_regex)
OPS = sorted(d.type for m in MODULES for d in vars(m).values()
             if getattr(d, "type", None) in REGISTRY and REGISTRY[d.type] is d)


def test_every_string_op_is_listed():
    assert len(OPS) == 26 and {"StringJoin", "StringToHashBucketFast", "RegexReplace", "Assert", "PrintV2"} <= set(OPS)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("op_type", OPS)
def test_the_declaration_is_tensorflows(tf_oracle, op_type):
    declaration_matches(tf_oracle, op_type)
