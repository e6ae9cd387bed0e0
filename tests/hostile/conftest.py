"""Fixtures the hostile-input tests share."""

import numpy as np
import pytest

import graphdef as gd


@pytest.fixture(scope="session")
def export(tmp_path_factory):
    """A small SavedModel written by graphdef (x [1,3] -> relu(x @ w) -> y, w a variable with its
    checkpoint): the tests copy it before damaging the copy."""
    path = tmp_path_factory.mktemp("seed") / "export"
    graph = gd.Graph()
    with graph.as_default():
        x = gd.placeholder(gd.float32, [1, 3], name="x")
        w = gd.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
        y = gd.nn.relu(gd.matmul(x, w), name="y")
        init = gd.global_variables_initializer()
    with gd.Session(graph=graph) as sess:
        sess.run(init)
        gd.saved_model.simple_save(sess, path, {"x": x}, {"y": y})
    return path
