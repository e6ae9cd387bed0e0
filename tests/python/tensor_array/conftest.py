"""TensorArrays are the numpy runtime's ops: their Sessions run on the python engine."""

import pytest


@pytest.fixture(autouse=True)
def numpy_engine(monkeypatch):
    monkeypatch.setenv("GRAPHDEF_ENGINE", "python")
