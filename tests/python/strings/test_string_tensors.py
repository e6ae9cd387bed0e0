"""DT_STRING in the Python runtime: the dtype, constants both ways through a GraphDef, feeds and fetches,
and the string cases of the shape and selection ops, each against TensorFlow."""

import numpy as np
import pytest

import graphdef
from graphdef.framework import dtypes
from graphdef.wire import values
from tests.python.strings.oracle import assert_same, run_ours_in_both, run_tf_graph_in_both
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture, taken by name

HOSTILE = [b"", b"plain", "\u00e9t\u00e9".encode(), b"\xff\xfe not utf-8", b"nul\x00inside\x00",
           b"\x1b[2J\x1b[31mred", b"\\\"quoted\"", b"x" * 70_000]


def test_the_dtype():
    s = graphdef.string
    assert (s.name, s.enum, s.is_string, s.is_floating, s.is_integer, s.is_bool) == ("string", 7, True, False, False,
                                                                                       False)
    for value in ("string", 7, np.object_, bytes, str, np.dtype("S3"), np.dtype("U2"), s):
        assert dtypes.as_dtype(value) is s, value
    assert not graphdef.float32.is_string


@pytest.mark.tf_oracle
@pytest.mark.parametrize("bound", ["min", "max"])
def test_a_string_has_no_min_or_max_as_in_tensorflow(tf_oracle, bound):
    with pytest.raises(TypeError):
        getattr(tf_oracle.string, bound)
    with pytest.raises(TypeError, match="tf.string"):
        getattr(graphdef.string, bound)


def test_string_arrays_from_python_values():
    got = dtypes.string_array([["a", b"b"], [np.str_("\u00e9"), np.bytes_(b"\xff")]])
    assert got.dtype == object and got.tolist() == [[b"a", b"b"], ["\u00e9".encode(), b"\xff"]]
    assert dtypes.string_array("x").shape == () and dtypes.string_array(np.array(["ab", "c"])).tolist() == [b"ab", b"c"]
    for bad in ([1, 2], ["a", 1], [["a"], ["b", "c"]], None):
        with pytest.raises(TypeError):
            dtypes.string_array(bad)


def test_a_tensor_proto_round_trip_keeps_every_byte():
    array = dtypes.string_array(np.array(HOSTILE, dtype=object).reshape(2, 4))
    proto = values.ndarray_to_proto(array)
    assert not proto.tensor_content and list(proto.string_val) == HOSTILE
    back = values.ndarray_from_proto(proto)
    assert back.dtype == object and back.tolist() == array.tolist()


def test_fewer_string_vals_repeat_the_last_and_none_give_empty_strings():
    proto = values.ndarray_to_proto(dtypes.string_array(["a", "b"]))
    proto.tensor_shape.dim[0].size = 4
    assert values.ndarray_from_proto(proto).tolist() == [b"a", b"b", b"b", b"b"]
    del proto.string_val[:]
    assert values.ndarray_from_proto(proto).tolist() == [b""] * 4


def test_string_tensor_content_is_refused_in_one_line():
    proto = values.ndarray_to_proto(dtypes.string_array(["a"]))
    proto.tensor_content = b"\x01a"
    with pytest.raises(ValueError, match="attr 'value': a string tensor cannot be given as tensor_content"):
        values.ndarray_from_proto(proto, "attr 'value'")


@pytest.mark.tf_oracle
def test_tensorflow_string_constants_run_here(tf_oracle):
    def build(tf):
        c = tf.constant(np.array(HOSTILE, dtype=object).reshape(2, 4), name="c")
        scalar = tf.constant(b"\x00", name="scalar")
        return [tf.identity(c), scalar, tf.fill([2, 1], scalar), tf.zeros([0, 3], tf.string)]
    run_tf_graph_in_both(tf_oracle, build)


@pytest.mark.tf_oracle
def test_our_string_constants_run_in_tensorflow(tf_oracle):
    run_ours_in_both(tf_oracle, lambda tf: [tf.constant(np.array(HOSTILE, dtype=object).reshape(4, 2)),
                                            tf.constant("\u00e9"), tf.constant([["a", "b"]], dtype=tf.string)])


FED = np.array([b"a", b"", b"\xff\x00", b"a"], dtype=object)


@pytest.mark.tf_oracle
def test_the_shape_and_selection_ops_carry_strings_as_tensorflow_does(tf_oracle):
    def build(tf):
        x = tf.compat.v1.placeholder(tf.string, [None], name="x")
        m = tf.reshape(x, [2, 2])
        parts = tf.unstack(m)
        return [tf.identity(x), m, tf.stack([x, x], axis=1), *parts, tf.gather(x, [3, 0, 0]),
                tf.gather(m, [1], axis=1), tf.concat([m, m], axis=0), tf.expand_dims(x, 0),
                tf.squeeze(tf.expand_dims(x, 1)), tf.equal(x, b"a"), tf.not_equal(x, tf.reverse(x, [0])),
                tf.compat.v1.where(tf.equal(x, b"a"), x, tf.fill([4], b"-")),
                tf.where(tf.equal(x, b"a"), x, tf.fill([4], b"-")), tf.tile(m, [2, 3]), tf.slice(m, [0, 1], [2, 1]),
                tf.transpose(m), tf.compat.v1.placeholder_with_default(tf.constant(["d"]), [None]),
                tf.strided_slice(x, [1], [3]), tf.identity_n([x, m])[1]]
    run_tf_graph_in_both(tf_oracle, build, {"x": FED})


@pytest.mark.parametrize("fed", [["a", "b"], [b"a", b"b"], np.array(["a", "b"]), np.array([b"a", b"b"]),
                                 np.array(["a", b"b"], dtype=object)])
def test_a_string_placeholder_takes_str_and_bytes(fed):
    with graphdef.Graph().as_default():
        x = graphdef.placeholder(graphdef.string, [2])
        with graphdef.Session() as sess:
            got = sess.run(graphdef.identity(x), {x: fed})
    assert_same(got, np.array([b"a", b"b"], dtype=object), "x")


@pytest.mark.parametrize("fed, words", [([1, 2], "not int"), (["a", None], "not NoneType"),
                                        (np.zeros(2), "not float")])
def test_a_string_placeholder_refuses_other_values_in_one_line(fed, words):
    with graphdef.Graph().as_default():
        x = graphdef.placeholder(graphdef.string, [2], name="x")
        with graphdef.Session() as sess, pytest.raises(TypeError) as e:
            sess.run(x, {x: fed})
    assert str(e.value).startswith("Session.run: cannot feed 'x:0' (string): ") and words in str(e.value)


def test_a_number_placeholder_refuses_strings():
    with graphdef.Graph().as_default():
        x = graphdef.placeholder(graphdef.float32, [1], name="x")
        with graphdef.Session() as sess, pytest.raises(TypeError, match="cannot feed <U1 data to 'x:0'"):
            sess.run(x, {x: ["a"]})


def test_a_scalar_string_fetch_is_bytes_as_in_tensorflow():
    with graphdef.Graph().as_default():
        with graphdef.Session() as sess:
            assert sess.run(graphdef.constant("\u00e9")) == "\u00e9".encode()
