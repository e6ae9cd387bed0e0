"""The ops of issue 34 are the numpy runtime's: their Sessions run on the python engine."""

import pytest


@pytest.fixture(autouse=True)
def numpy_engine(monkeypatch):
    monkeypatch.setenv("GRAPHDEF_ENGINE", "python")
