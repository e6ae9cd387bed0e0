"""Differential fuzzing of the string ops: random hostile strings (NUL, 0xff, UTF-8, escapes, separators)
and random attrs, in TensorFlow and here; both must give the same values or both refuse."""

import random

import numpy as np
import pytest

import graphdef
from graphdef.wire.serialize import import_graph_def
from tests.python.strings.oracle import assert_same
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture, taken by name

pytestmark = [pytest.mark.tf_oracle, pytest.mark.slow]

SYMBOLS = [b"a", b"b", b" ", b",", b"\x00", b"\xff", b"\xc3\xa9", b"\t", b"1", b"-", b".", b"e", b"A", b"\\", b"=",
           b"_", b"+", b"/", b"\x1b"]


def _ops(r):
    """Each builds one op of TF's raw_ops over the string placeholder x, with attrs drawn from r."""
    c = r.choice
    return [
        lambda tf, x: list(tf.raw_ops.StringSplitV2(input=tf.reshape(x, [-1]), sep=c([b"", b",", b"a", b", "]),
                                                    maxsplit=c([-1, 0, 1, 2]))),
        lambda tf, x: list(tf.raw_ops.StringSplit(input=tf.reshape(x, [-1]), delimiter=c([b"", b",", b"a,"]),
                                                  skip_empty=c([True, False]))),
        lambda tf, x: [tf.raw_ops.StringToNumber(string_tensor=x, out_type=c([tf.float32, tf.float64, tf.int32]))],
        lambda tf, x: [tf.raw_ops.DecodeBase64(input=x)],
        lambda tf, x: [tf.raw_ops.Substr(input=x, pos=r.randrange(-4, 5), len=r.randrange(-2, 5),
                                         unit=c(["BYTE", "UTF8_CHAR"]))],
        lambda tf, x: [tf.raw_ops.StaticRegexReplace(input=x, pattern=c(["a*", "[a-z]+", "\\s", "^", "$", "(a)|(b)",
                                                                          ".", "\\b", "\u00e9*"]),
                                                     rewrite=c(["", "<\\0>", "\\1\\2", "x"]),
                                                     replace_global=c([True, False]))],
        lambda tf, x: [tf.raw_ops.StringLower(input=x, encoding=c(["", "utf-8"])),
                       tf.raw_ops.StringUpper(input=x, encoding=c(["", "utf-8"]))],
        lambda tf, x: [tf.raw_ops.StringLength(input=x, unit=c(["BYTE", "UTF8_CHAR"])), tf.raw_ops.StringStrip(input=x),
                       tf.raw_ops.EncodeBase64(input=x, pad=c([True, False]))],
        lambda tf, x: [tf.raw_ops.StringFormat(inputs=[x], template="<%s>", placeholder="%s",
                                               summarize=c([-1, 0, 1, 3]))],
        lambda tf, x: [tf.raw_ops.ReduceJoin(inputs=x, reduction_indices=c([[0], [-1], []]),
                                             keep_dims=c([True, False]), separator=c(["", "-"]))],
        lambda tf, x: [tf.raw_ops.StringToHashBucketFast(input=x, num_buckets=c([1, 7, 2 ** 40])),
                       tf.raw_ops.Fingerprint(data=x, method="farmhash64")],
    ]


def _value(r, shape):
    items = [b"".join(r.choice(SYMBOLS) for _ in range(r.choice([0, 1, 2, 3, 5, 8, 20])))
             for _ in range(int(np.prod(shape)))]
    value = np.empty(len(items), object)
    value[:] = items
    return value.reshape(shape)


@pytest.mark.parametrize("seed", range(4))
def test_random_hostile_strings_agree_with_tensorflow(tf_oracle, seed):
    tf, r = tf_oracle, random.Random(seed)
    compared = 0
    for _ in range(60):
        ops = _ops(r)
        build = ops[r.randrange(len(ops))]
        value = _value(r, r.choice([[0], [1], [3], [2, 2], [1, 3]]))
        graph = tf.Graph()
        with graph.as_default():
            x = tf.compat.v1.placeholder(tf.string, None, name="x")
            names = [t.name for t in build(tf, x)]
        try:
            with tf.compat.v1.Session(graph=graph) as sess:
                theirs = sess.run(names, {"x:0": value})
        except (tf.errors.OpError, UnicodeDecodeError):  # TF's message holding bytes that are not UTF-8
            theirs = None
        ours_graph = graphdef.Graph()
        with ours_graph.as_default():
            import_graph_def(graph.as_graph_def(), name="")
        try:
            with graphdef.Session(graph=ours_graph) as sess:
                ours = sess.run(names, {"x:0": value})
        except graphdef.errors.OpError as e:
            assert theirs is None, (names, value.tolist(), str(e))
            continue
        assert theirs is not None, (names, value.tolist(), "TensorFlow refused; graphdef did not")
        for name, o, t in zip(names, ours, theirs):
            assert_same(o, t, f"{name} of {value.tolist()}")
        compared += 1
    assert compared >= 30  # most draws are valid inputs: values, not only refusals, are compared
