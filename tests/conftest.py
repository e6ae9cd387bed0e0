"""Shared test set-up: every kernel's output is checked against its op's inferred dtype and shape."""

import os

os.environ["GRAPHDEF_CHECK_KERNELS"] = "1"  # read when graphdef.client.session is imported

import pytest  # noqa: E402

import graphdef as tf  # noqa: E402


@pytest.fixture
def graph():
    """A fresh graph, default for the duration of the test."""
    g = tf.Graph()
    with g.as_default():
        yield g


@pytest.fixture(scope="session")
def cc_runner():
    """build/graphrun-cc, built with `make cc` when missing; a failed build fails, never skips."""
    import pathlib
    import subprocess
    repo = pathlib.Path(__file__).resolve().parent.parent
    binary = repo / "build" / "graphrun-cc"
    if not binary.exists():
        proc = subprocess.run(["make", "-s", "cc"], cwd=repo, capture_output=True, text=True)
        if proc.returncode != 0 or not binary.exists():
            tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
            pytest.fail(f"`make cc` could not build build/graphrun-cc:\n{tail}")
    return binary


@pytest.fixture(scope="session")
def runner(cc_runner):
    """The graphrun-cc tests' name for cc_runner."""
    return cc_runner
