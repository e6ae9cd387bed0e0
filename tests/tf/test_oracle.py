"""TensorFlow itself as the oracle: it imports every conformance model.pb and must agree.

Importing a file with tf.compat.v1.import_graph_def is the wire-compatibility proof;
running it and matching the expected values (hence every other runtime) is the
semantic one. Skipped, with the reason reported, where TensorFlow is not installed
(`make test` installs it).
"""

import os

import numpy as np
import pytest

from graphdef.ops.lookup import INIT_OP
from tests.conformance import replay
from tests.support.tf_capabilities import why_tensorflow_cannot_run

pytestmark = pytest.mark.tf_oracle

CASE_DIRS = replay.case_dirs()

# Cases where TensorFlow's answer differs from the table, one line each (none so far).
KNOWN_DIFFERENCES = {}


def cases():
    params = []
    for directory in CASE_DIRS:
        why = KNOWN_DIFFERENCES.get(directory.name)
        marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
        params.append(pytest.param(directory, id=directory.name, marks=marks))
    return params


@pytest.fixture(scope="module")
def tf():
    """TensorFlow, imported once per module because the import takes seconds."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # must precede the import to quiet its C++ logging
    return pytest.importorskip("tensorflow", reason="TensorFlow is not installed; `make test` installs it")


def import_into_tensorflow(tf, model_bytes):
    graph_def = tf.compat.v1.GraphDef.FromString(model_bytes)
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
    return graph_def, graph


def cpu_session(tf, graph):
    config = tf.compat.v1.ConfigProto(device_count={"GPU": 0})
    return tf.compat.v1.Session(graph=graph, config=config)


@pytest.mark.parametrize("directory", cases())
def test_tensorflow_agrees(tf, directory):
    case = replay.load(directory)
    if "tensorflow" in case.skip:
        pytest.skip(f"TensorFlow skips {case.name}: {case.skip['tensorflow']}")
    graph_def, graph = import_into_tensorflow(tf, case.model.read_bytes())
    why = why_tensorflow_cannot_run(tf, graph_def, case.name)
    if why:
        pytest.skip(f"{case.name}: {why}")
    with cpu_session(tf, graph) as sess:
        if any(node.name == INIT_OP for node in graph_def.node):  # graphdef's loaders run it by themselves
            sess.run(INIT_OP)
        values = sess.run(case.fetches, feed_dict={f"{name}:0": v for name, v in case.feeds.items()})
    replay.check_outputs("TensorFlow", case, [np.asarray(v) for v in values])


@pytest.mark.parametrize("directory", [pytest.param(d, id=d.name) for d in CASE_DIRS])
def test_tensorflow_reserializes_the_same_bytes(tf, directory):
    """TF's own GraphDef message writes our file back byte for byte: no unknown or misnumbered fields."""
    data = (directory / "model.pb").read_bytes()
    graph_def = tf.compat.v1.GraphDef.FromString(data)
    again = graph_def.SerializeToString(deterministic=True)
    assert again == data, (f"{directory.name}: TensorFlow re-serializes model.pb differently "
                           f"({len(again)} bytes vs {len(data)}); first difference at byte "
                           f"{first_difference(again, data)}")


def first_difference(a, b):
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
