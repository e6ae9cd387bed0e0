"""ZerosLike of a string tensor is empty strings, as in TensorFlow; OnesLike refuses strings."""

import numpy as np
import pytest

import graphdef
from graphdef.framework.errors import InvalidArgumentError
from tests.python.strings.oracle import run_tf_graph_in_both
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture, taken by name


@pytest.mark.tf_oracle
def test_zeros_like_of_strings_is_empty_strings(tf_oracle):
    def build(tf):
        x = tf.compat.v1.placeholder(tf.string, [None], name="x")
        return [tf.zeros_like(x, name="z")]
    (got,) = run_tf_graph_in_both(tf_oracle, build, {"x": np.array([b"a", b"\xff", b""], object)})
    assert got.tolist() == [b"", b"", b""]


def test_ones_like_of_strings_is_refused_in_one_line():
    graph = graphdef.Graph()
    with graph.as_default():
        o = graphdef.ones_like(graphdef.constant([b"a", b"bc"]), name="o")
    with graphdef.Session(graph=graph) as session, pytest.raises(InvalidArgumentError) as e:
        session.run(o)
    assert str(e.value) == "node 'o' (OnesLike): OnesLike takes numbers or bools, not strings"
