"""Shared test set-up: every kernel's output is checked against its op's inferred dtype and shape."""

import os
import subprocess

os.environ["GRAPHDEF_CHECK_KERNELS"] = "1"  # read when graphdef.client.session is imported

import pytest  # noqa: E402

import graphdef as tf  # noqa: E402
from tests.support.cc_helpers import REPO, RUNNER  # noqa: E402


@pytest.fixture
def graph():
    """A fresh graph, default for the duration of the test."""
    g = tf.Graph()
    with g.as_default():
        yield g


# Modules whose subject is the numpy runtime (the op families' kernels: their semantics, errors and
# gradients against oracles, the hostile inputs they must refuse; its control-flow executor): their
# Sessions run on the python engine, since auto would hand nearly every op to the C++ core, whose
# kernels have their own tests (tests/cc/) and the engines' comparison (tests/python/test_engines.py).
# Elsewhere GRAPHDEF_ENGINE, when a run sets it, decides.
NUMPY_RUNTIME_MODULES = ("tests.python.ops.", "tests.python.test_gradients", "tests.python.test_list_ops",
                         "tests.hostile.test_py", "tests.python.test_control_flow_exec")


@pytest.fixture(autouse=True)
def numpy_engine_for_numpy_runtime_tests(request, monkeypatch):
    if request.module.__name__.startswith(NUMPY_RUNTIME_MODULES):
        monkeypatch.setenv("GRAPHDEF_ENGINE", "python")


@pytest.fixture(scope="session")
def cc_runner():
    """build/graphrun-cc, built with `make cc` when missing; a failed build fails, never skips."""
    if not RUNNER.exists():
        proc = subprocess.run(["make", "-s", "cc"], cwd=REPO, capture_output=True, text=True)
        if proc.returncode != 0 or not RUNNER.exists():
            tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
            pytest.fail(f"`make cc` could not build build/graphrun-cc:\n{tail}")
    return RUNNER


@pytest.fixture(scope="session")
def runner(cc_runner):
    """cc_runner's shorter name, as the graphrun-cc tests call it."""
    return cc_runner


def pytest_collection_modifyitems(config, items):
    """A test that asks for the tf_oracle fixture carries the tf_oracle marker, so `-m` selects it."""
    unmarked = [item.nodeid for item in items
                if "tf_oracle" in item.fixturenames and item.get_closest_marker("tf_oracle") is None]
    if unmarked:
        raise pytest.UsageError("mark these tests with @pytest.mark.tf_oracle (they use TensorFlow as the "
                                "oracle):\n  " + "\n  ".join(unmarked))
