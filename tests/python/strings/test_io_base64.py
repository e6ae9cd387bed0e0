"""tf.io.encode_base64 / decode_base64, where TensorFlow keeps them, give TensorFlow's answers."""

import numpy as np
import pytest

from tests.python.strings.oracle import run_ours_in_both
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture, taken by name


@pytest.mark.tf_oracle
@pytest.mark.parametrize("pad", [False, True])
def test_the_tf_io_names_round_trip_as_tensorflow(tf_oracle, pad):
    def build(tf):
        x = tf.placeholder(tf.string, [None], name="x")
        encoded = tf.io.encode_base64(x, pad=pad, name="e")
        return [encoded, tf.io.decode_base64(encoded, name="d")]
    values = np.array([b"", b"hi?", b"\xff\xfe\x00", b"x" * 1000], object)
    encoded, decoded = run_ours_in_both(tf_oracle, build, {"x": values})
    assert decoded.tolist() == values.tolist()
