"""A model path that is not a readable GraphDef file (absent, a directory without saved_model.pb,
a file past protobuf's 2 GB limit) gets the same line from graphrun and graphrun-cc."""

import pytest

from tests.support.cc_helpers import run_cc
from tests.support.graphrun_helpers import graphrun


def _absent(tmp_path):
    return tmp_path / "absent.pb", "no such file"


def _directory(tmp_path):
    (tmp_path / "models").mkdir()
    return tmp_path / "models", "is a directory, not a model file (nor a SavedModel: it has no saved_model.pb)"


def _huge(tmp_path):
    path = tmp_path / "huge.pb"
    with open(path, "wb") as f:
        f.truncate(3 << 30)  # sparse: no disk
    return path, ("the file is 3221225472 bytes, over protobuf's 2 GB limit (2147483647 bytes) for one "
                  "GraphDef; write the model with its weights in a file beside it (graphdef's writers do so "
                  "over 2 GB)")


CASES = {"absent": _absent, "directory": _directory, "over 2 GB": _huge}


@pytest.mark.parametrize("verb", ["run", "inspect"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_path_that_is_no_model_file_is_named_alike(runner, tmp_path, capsys, case, verb):
    path, words = CASES[case](tmp_path)
    line = f"{path}: {words}\n"
    assert graphrun(capsys, verb, path) == (3, "", "graphrun: " + line)
    assert run_cc(runner, verb, path) == (3, "", "graphrun-cc: " + line)
