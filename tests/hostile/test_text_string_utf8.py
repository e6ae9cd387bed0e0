"""A `string` field of a text GraphDef (a name, an op, an input, an attr's key) must hold UTF-8, as
TensorFlow's importer wants; C++ TextFormat keeps any bytes, Python's protobuf cannot. Both
runtimes refuse it in one line placed at the opening quote of the value's first literal (1-based
line; column in bytes, a tab to the next multiple of 8), while a `bytes` field (an attr's s) keeps
any bytes. The texts are written by hand, the positions counted by hand."""
import pytest

from tests.support.cc_helpers import run_cc
from tests.support.graphrun_helpers import graphrun

OK = 'node { name: "ok" op: "NoOp" }\n'

REFUSED = {
    # octal past a byte: C++ keeps 0xff
    "tab before the field": (OK + 'node {\tname: "x\\777" op: "NoOp" }\n', 2, 15),
    "op": ('node { name: "n" op: "No\\xffOp" }\n', 1, 22),
    "second of two literals": ('node { name: "a" "\\xc3" "(" op: "NoOp" }\n', 1, 14),
    "surrogate escape": ('node { name: "s\\ud800" op: "NoOp" }\n', 1, 14),
    "overlong nul": ('node { name: "z\\300\\200" op: "NoOp" }\n', 1, 14),
    "list of inputs": (OK + 'node { name: "i" op: "NoOp"\n  input: ["^ok", \'^\\377\'] }\n', 3, 18),
    "attr key": (OK + 'node { name: "k" op: "NoOp" attr {\n key: "\\200" value { i: 1 } } }\n', 3, 7),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_string_field_that_is_not_utf8_is_refused_alike(runner, tmp_path, capsys, case):
    text, line, column = REFUSED[case]
    path = tmp_path / "model.pbtxt"
    path.write_text(text)
    expected = f"{path}: not a text-format GraphDef (line {line} column {column}: a string is not valid UTF-8)\n"
    assert graphrun(capsys, "run", path) == (3, "", "graphrun: " + expected)
    assert run_cc(runner, "run", path) == (3, "", "graphrun-cc: " + expected)


def test_utf8_split_across_literals_and_raw_bytes_in_s_are_taken_alike(runner, tmp_path, capsys):
    # "\xc3" "\xa9" is one value, e with an acute accent; s is a bytes field
    text = ('node { name: "x" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }\n'
            ' attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2.5 } } }\n'
            ' attr { key: "caf\\xc3" "\\xa9" value { s: "\\377\\200" } } }\n')
    path = tmp_path / "model.pbtxt"
    path.write_text(text)
    expected = (0, "x:0 float32 [] = 2.5\n", "")
    assert graphrun(capsys, "run", path, "--fetch", "x") == expected
    assert run_cc(runner, "run", path, "--fetch", "x") == expected
