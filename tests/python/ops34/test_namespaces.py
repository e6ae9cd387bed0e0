"""tf.sparse and tf.linalg: every name graphdef gives there is TensorFlow's, and the builders answer
as TensorFlow's do."""

import numpy as np
import pytest

import graphdef
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture, taken by name


@pytest.mark.tf_oracle
@pytest.mark.parametrize("namespace", ["sparse", "linalg"])
def test_every_name_is_tensorflows(tf_oracle, namespace):
    ours = {n for n in vars(getattr(graphdef, namespace)) if not n.startswith("_")} - {"annotations"}
    theirs = set(dir(getattr(tf_oracle.compat.v1, namespace)))
    modules = {n for n in ours if type(getattr(getattr(graphdef, namespace), n)).__name__ == "module"}
    assert sorted(ours - modules - theirs) == []


@pytest.mark.tf_oracle
def test_the_builders_answer_as_tensorflow(tf_oracle):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 10
    indices, values, shape = [[0, 1], [2, 0]], np.float32([1.5, -2.0]), [3, 2]

    def build(tf):
        sp = tf.SparseTensor(indices, values, shape)
        return [tf.linalg.band_part(x, 1, 0), tf.linalg.diag_part(x),
                tf.linalg.set_diag(x, np.ones((2, 3), np.float32)), tf.sparse.to_dense(sp),
                tf.sparse.reduce_sum(sp, axis=1), tf.sparse.sparse_dense_matmul(sp, np.ones((2, 4), np.float32))]
    graph = graphdef.Graph()
    with graph.as_default(), graphdef.Session() as session:
        ours = session.run(build(graphdef))
    theirs = [t.numpy() for t in build(tf_oracle)]
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o, t)
