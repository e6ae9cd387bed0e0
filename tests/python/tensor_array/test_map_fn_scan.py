"""graphdef's tf.map_fn and tf.scan (TensorArrays in a while loop, as TF1 builds them) give TensorFlow's
answers, and their gradients match central differences."""

import numpy as np
import pytest

import graphdef
from tests.python.tensor_array.test_gradients import _check
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture

RNG = np.random.default_rng(3434)

CASES = {
    "map_fn": lambda tf, x: tf.map_fn(lambda r: r * r + tf.reduce_sum(r), x),
    "map_fn to two outputs": lambda tf, x: tf.map_fn(lambda t: (t[0] * 2.0, tf.reduce_max(t[1])), (x, x),
                                                     dtype=(tf.float32, tf.float32)),
    "scan": lambda tf, x: tf.scan(lambda a, r: a * 0.5 + r, x),
    "scan reversed from an initializer": lambda tf, x: tf.scan(lambda a, r: a + tf.reduce_sum(r), x,
                                                               initializer=tf.constant(1.0), reverse=True),
    "nested map_fn": lambda tf, x: tf.map_fn(lambda r: tf.map_fn(lambda v: v * v - 1.0, r), x),
}


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_tensorflow(tf_oracle, case):  # noqa: F811 - the fixture
    x = RNG.normal(size=(5, 3)).astype(np.float32)
    out = CASES[case](tf_oracle, tf_oracle.constant(x))  # TensorFlow's, run eagerly
    theirs = [np.asarray(t) for t in (out if isinstance(out, tuple) else (out,))]
    g = graphdef.Graph()
    with g.as_default():
        placeholder = graphdef.placeholder(graphdef.float32, [5, 3])
        ours = CASES[case](graphdef, placeholder)
    assert any(op.type == "TensorArrayV3" for op in g.get_operations())
    with graphdef.Session(graph=g) as sess:
        ours = sess.run(list(ours) if isinstance(ours, tuple) else [ours], {placeholder: x})
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("build", [
    lambda x: graphdef.map_fn(lambda r: graphdef.sin(r) * r, x),
    lambda x: graphdef.scan(lambda a, r: a * r + 1.0, x),
], ids=["map_fn", "scan"])
def test_gradients_match_central_differences(build):
    _check(lambda x: graphdef.reshape(build(x), [4, 3]), [(4, 3)], [(-1, 1)])
