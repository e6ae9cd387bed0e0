"""The committed test models are what tests/models/generate.py writes, and run alike in Python and C++."""

import pytest

from graphdef._native import capi
from tests.support.graphrun_helpers import MODELS, ok
from tests.models import generate


@pytest.mark.parametrize("name", sorted(generate.MODELS))
def test_committed_models_match_the_generator(tmp_path, name):
    generate.write(tmp_path)
    assert (tmp_path / name).read_bytes() == (MODELS / name).read_bytes(), \
        f"tests/models/{name} is stale: run .venv/bin/python -m tests.models.generate"


@pytest.mark.slow
@pytest.mark.parametrize("name, shape", [("mlp.pb", "x=8,16"), ("cnn.pb", "x=8,8,8,1")])
def test_committed_models_pass_compare(capsys, name, shape):
    try:
        capi.load_library()  # compare's cc engine
    except capi.LibraryMissing as e:
        pytest.fail(f"compare's cc engine needs libgraphrun.so: {e}")
    out = ok(capsys, "compare", MODELS / name, "--random", "--shape", shape)
    assert out.splitlines()[-1].startswith("PASSED: 1 output agrees")
