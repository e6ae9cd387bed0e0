"""The committed test models are what tests/models/generate.py writes, and run alike in Python and C++."""

import pytest

from graphdef.graphrun import engines
from tests.graphrun_helpers import MODELS, ok
from tests.models import generate


@pytest.mark.parametrize("name", sorted(generate.MODELS))
def test_committed_models_match_the_generator(tmp_path, name):
    generate.write(tmp_path)
    assert (tmp_path / name).read_bytes() == (MODELS / name).read_bytes(), \
        f"tests/models/{name} is stale: run .venv/bin/python -m tests.models.generate"


@pytest.mark.parametrize("name, shape", [("mlp.pb", "x=8,16"), ("cnn.pb", "x=8,8,8,1")])
def test_committed_models_pass_compare(capsys, name, shape):
    try:
        engines.find_cc()
    except engines.EngineMissing as e:
        pytest.skip(str(e))
    out = ok(capsys, "compare", MODELS / name, "--random", "--shape", shape)
    assert out.splitlines()[-1].startswith("PASSED: 1 output agrees")
