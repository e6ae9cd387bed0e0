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


# -- string literals in text GraphDefs: TensorFlow's (protobuf C++'s) escapes in both runtimes --

PLACEHOLDER_X = 'node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }'


def _with_attr_s(literal, indent="\t "):
    """A Placeholder with a bytes attr 's' holding `literal`, on a second line after a tab, so the
    column counts bytes and tab stops as protobuf C++ counts them."""
    return f'{PLACEHOLDER_X}\n{indent}attr {{ key: "s" value {{\ts: "a\tb{literal}" }} }} }}\n'


# (the literal's tail, the column protobuf C++ names: where its tokenizer stopped). By hand: line 2
# is "\t attr { key: "s" value {\ts: "a\tb" with tab stops every 8 columns, so the tail starts at
# 0-based column 49, and its escape's letter is at 1-based column 51
BAD_ESCAPES = {
    "unknown letter": (r"\q", 51, "Invalid escape sequence in string literal."),
    "digit past octal": (r"\8", 51, "Invalid escape sequence in string literal."),
    "hex without digits": (r"\x", 52, "Expected hex digits for escape sequence."),
    "short \\u": (r"\u12", 54, "Expected four hex digits for \\u escape sequence."),
    "\\u with a non-hex digit": (r"\u12g4", 54, "Expected four hex digits for \\u escape sequence."),
    "\\U past 10ffff": (r"\U00200000", 54, "Expected eight hex digits up to 10ffff for \\U escape sequence"),
    "after a two-byte letter": ("\u00e9\\q", 53, "Invalid escape sequence in string literal."),  # bytes count
}


@pytest.mark.parametrize("case", sorted(BAD_ESCAPES))
def test_an_escape_protobuf_cc_refuses_is_refused_alike(runner, tmp_path, capsys, case):
    literal, column, why = BAD_ESCAPES[case]
    path = tmp_path / "model.pbtxt"
    path.write_text(_with_attr_s(literal))
    line = f"{path}: not a text-format GraphDef (line 2 column {column}: {why})\n"
    assert graphrun(capsys, "run", path, "--random", "--shape", "x=1")[::2] == (3, "graphrun: " + line)
    assert run_cc(runner, "run", path, "--random", "--shape", "x=1")[::2] == (3, "graphrun-cc: " + line)


# What protobuf C++ makes of each escape (its tokenizer's ParseStringAppend), spelled out by hand
GOOD_ESCAPES = {
    r"\777": b"\xff",  # an octal escape keeps its low 8 bits
    r"\400": b"\x00",
    r"\1012": b"A2",  # three digits at most
    r"\x4": b"\x04",
    r"\x414": b"A4",  # two hex digits at most
    r"\ud800": b"\xed\xa0\x80",  # a lone surrogate, encoded as any code point
    r"\ud83d\ude00": b"\xf0\x9f\x98\x80",  # a surrogate pair, one code point
    r"\U0001F600": b"\xf0\x9f\x98\x80",
    r"\U00110000": b"\xf4\x90\x80\x80",  # past 10ffff, yet let through by the tokenizer
    r"\?\a\'\\\"\v": b"?\x07'\\\"\x0b",
}


@pytest.mark.parametrize("literal", sorted(GOOD_ESCAPES))
def test_an_escape_protobuf_cc_accepts_gives_its_bytes(runner, tmp_path, capsys, literal):
    from graphdef._proto import graph_pb2
    from graphdef.wire import pbtxt

    text = _with_attr_s(literal)
    parsed = pbtxt.parse(text.encode(), graph_pb2.GraphDef())
    assert parsed.node[0].attr["s"].s == b"a\tb" + GOOD_ESCAPES[literal]
    path = tmp_path / "model.pbtxt"
    path.write_text(text)
    argv = ("run", path, "--feed", "x=[2.5]")
    assert graphrun(capsys, *argv) == run_cc(runner, *argv) == (0, "x:0 float32 [1] = [2.5]\n", "")


def test_raw_bytes_that_are_not_utf8_stand_in_a_bytes_literal(runner, tmp_path, capsys):
    from graphdef._proto import graph_pb2
    from graphdef.wire import pbtxt

    data = _with_attr_s("").encode().replace(b'b" }', b'b\xff\xfe\x80" }')
    assert pbtxt.parse(data, graph_pb2.GraphDef()).node[0].attr["s"].s == b"a\tb\xff\xfe\x80"
    path = tmp_path / "model.pbtxt"
    path.write_bytes(data)
    argv = ("run", path, "--feed", "x=[2.5]")
    assert graphrun(capsys, *argv) == run_cc(runner, *argv) == (0, "x:0 float32 [1] = [2.5]\n", "")


def test_graphrun_refuses_a_string_field_that_is_not_utf8_where_its_literal_opens(tmp_path, capsys):
    # protobuf's Python classes cannot hold such a name; TensorFlow refuses it at import
    path = tmp_path / "model.pbtxt"
    path.write_text('node { name: "ok" op: "NoOp" }\nnode {\tname: "x\\777" op: "NoOp" }\n')
    assert graphrun(capsys, "run", path)[::2] == (
        3, f"graphrun: {path}: not a text-format GraphDef (line 2 column 15: a string is not valid UTF-8)\n")
