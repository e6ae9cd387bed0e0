"""Control characters from a file never reach the terminal raw: a node name holding ESC [2J
would clear the screen of whoever reads the error. Both runtimes write each C0 control (tab and
line breaks become spaces), DEL and C1 control as \\xNN, in the same words; the expected lines
are spelled out here byte by byte."""

import pytest

from graphdef.framework.text_escape import escape_controls
from tests.support.cc_helpers import run_cc
from tests.support.graphrun_helpers import graphrun

# ESC [2J, SOH, BEL, DEL, CSI (C1, U+009B), NEL (U+0085), a vertical tab, then a letter beyond ASCII
HOSTILE = "x\x1b[2Jy\x01\x07\x7f\x9b\x85\x0bz\u00e9"
ESCAPED = "x\\x1b[2Jy\\x01\\x07\\x7f\\x9b\\x85\\x0bz\u00e9"


def pbtxt_string(text):
    """`text` as a text-format string literal, every byte outside printable ASCII in octal."""
    return '"' + "".join(chr(b) if 0x20 <= b < 0x7F and b not in b'"\\' else f"\\{b:03o}"
                         for b in text.encode()) + '"'


CONST = ('node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } '
         'attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }\n')

CASES = {
    # an input naming a node that is not there
    "input": (CONST + f'node {{ name: "b" op: "Identity" input: {pbtxt_string(HOSTILE)} '
              'attr { key: "T" value { type: DT_FLOAT } } }\n',
              f"node 'b' (Identity): input '{ESCAPED}' names no node in the graph"),
    # an op type no runtime knows
    "op": (f'node {{ name: "a" op: {pbtxt_string("Fo" + HOSTILE)} }}\n', f"no kernel for Fo{ESCAPED} (a)"),
}


def test_escape_controls_spells_out_every_control():
    assert escape_controls(HOSTILE) == ESCAPED
    text = "".join(map(chr, range(0x20))) + "\x7f" + "".join(map(chr, range(0x80, 0xA0))) + " ok\u00a0\u2028"
    expected = "".join(f"\\x{c:02x}" if c not in (9, 10, 13) else chr(c) for c in range(0x20)) + "\\x7f" + "".join(
        f"\\x{c:02x}" for c in range(0x80, 0xA0)) + " ok\u00a0\u2028"
    assert escape_controls(text) == expected


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_name_is_escaped_alike_in_both_runtimes(runner, tmp_path, capsys, case):
    text, message = CASES[case]
    path = tmp_path / "model.pbtxt"
    path.write_text(text)
    line = f"{path}: {message}\n"
    code, out, err = graphrun(capsys, path)
    cc_code, cc_out, cc_err = run_cc(runner, path)
    assert (code, out, err) == (3, "", "graphrun: " + line)
    assert (cc_code, cc_out, cc_err) == (3, "", "graphrun-cc: " + line)
    assert "\x1b" not in err + cc_err


def test_a_name_with_a_line_break_stays_one_line(runner, tmp_path, capsys):
    path = tmp_path / "model.pbtxt"
    path.write_text(f'node {{ name: "a" op: {pbtxt_string("Fo" + chr(10) + "o" + chr(9) + "p")} }}\n')
    code, _, err = graphrun(capsys, path)
    cc_code, _, cc_err = run_cc(runner, path)
    assert (code, cc_code) == (3, 3)
    assert err == f"graphrun: {path}: no kernel for Fo o p (a)\n"
    assert cc_err == f"graphrun-cc: {path}: no kernel for Fo o p (a)\n"


def test_inspect_reports_escape_names_alike_in_both_runtimes(runner, tmp_path, capsys):
    # an op type and a function name holding controls; the text report keeps its own newlines
    path = tmp_path / "model.pbtxt"
    function = pbtxt_string("g" + HOSTILE + chr(9) + chr(13))
    path.write_text(f'node {{ name: "a" op: {pbtxt_string("Fo" + HOSTILE)} }}\n'
                    f"library {{ function {{ signature {{ name: {function} }} }} }}\n")
    code, out, err = graphrun(capsys, "inspect", path)
    cc_code, cc_out, cc_err = run_cc(runner, "inspect", path)
    assert (code, err, cc_code, cc_err) == (0, "", 0, "")
    assert f"  Fo{ESCAPED}  1\n" in out and f"  g{ESCAPED}\\x09\\x0d  () -> ()  0 nodes\n" in out
    # graphrun-cc adds a last line, its optimizer's report; the rest is the same text
    assert cc_out == out + "optimize: 1 nodes, nothing to do\n"
    assert not any(c in out + cc_out for c in "\x1b\x01\x07\x7f\x9b\x85\x0b\x09\x0d")
