"""Shared test set-up: every kernel's output is checked against its op's inferred dtype and shape."""

import os

os.environ["GRAPHDEF_CHECK_KERNELS"] = "1"  # read when graphdef.session is imported

import pytest  # noqa: E402

import graphdef as tf  # noqa: E402


@pytest.fixture
def graph():
    """A fresh graph, default for the duration of the test."""
    g = tf.Graph()
    with g.as_default():
        yield g
