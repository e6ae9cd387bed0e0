"""A text GraphDef that does not parse gets protobuf C++'s words and position (TensorFlow's reader,
and graphrun-cc's) from graphrun too: the same line from both runtimes, spelled out here. Columns
are 1-based; C++ names most mistakes at the token after the one at fault."""
import pytest

from tests.support.cc_helpers import run_cc
from tests.support.graphrun_helpers import graphrun

CASES = {
    "a list for a string": ('node { name: ["a"] }', 1, 14, "Expected string, got: ["),
    "a number for a string": ('node { name: 5 }', 1, 14, "Expected string, got: 5"),
    "no value": ('node { name: }', 1, 14, "Expected string, got: }"),
    "a string for an int": ('node { name: "a" attr { key: "N" value { i: "x" } } }', 1, 45,
                            'Expected integer, got: "x"'),
    "a float for an int": ('node { name: "a" attr { key: "N" value { i: 1.5 } } }', 1, 45,
                           "Expected integer, got: 1.5"),
    "an int32 past its range": ('node { name: "a" attr { key: "v" value { tensor { int_val: 4294967296 } } } }', 1, 60,
                                "Integer out of range (4294967296)"),
    "an unknown field": ('node { nme: "a" }', 1, 11, 'Message type "graphdef.NodeDef" has no field named "nme".'),
    "an unknown top-level field": ('nodes { name: "a" }', 1, 7,
                                   'Message type "graphdef.GraphDef" has no field named "nodes".'),
    "an unknown field in a map entry": ('node { name: "a" attr { key: "x" nope: 1 } }', 1, 38,
                                        'Message type "graphdef.NodeDef.AttrEntry" has no field named "nope".'),
    "an unknown enum value": ('node { name: "a" attr { key: "T" value { type: DT_NOPE } } }', 1, 56,
                              'Unknown enumeration value of "DT_NOPE" for field "type".'),
    "a bool that is neither": ('node { name: "a" op: "NoOp" }\nnode { name: "b"\n'
                               ' attr { key: "v" value { b: maybe } } }', 3, 35,
                               'Invalid value for boolean field "b". Value: "maybe".'),
    "a field given twice": ('node { name: "a" name: "b" }', 1, 22,
                            'Non-repeated field "name" is specified multiple times.'),
    "two members of a oneof": ('node { name: "a" op: "NoOp" attr { key: "x" value { i: 1 f: 2 } } }', 1, 59,
                               'Field "f" is specified along with field "i", another member of oneof "value".'),
    "no colon before a scalar": ('node { name "a" }', 1, 13, 'Expected ":", found ""a"".'),
    "garbage": ("%%%", 1, 1, "Expected identifier, got: %"),
    "a brace too many": ('node { name: "a" } }', 1, 20, "Expected identifier, got: }"),
    "a brace missing, no final newline": ('node { name: "a" ', 1, 18, "Expected identifier, got: "),
    "a brace missing after comments": ('node { name: "a" \n\n  # c\n', 4, 1, "Expected identifier, got: "),
    "a string at the file's end": ('node { name: "abc', 1, 18, "Unexpected end of string."),
    "a string across lines": ('node { name: "ab\ncd" }', 1, 17, "String literals cannot cross line boundaries."),
    # found by running fuzz/py's pbtxt mutations through both runtimes
    "a brace closed by an angle bracket": ('node { name: "a" >', 1, 18, 'Expected "}", found ">".'),
    "a message truncated after its name": ("node", 1, 5, 'Expected "{", found "".'),
    "a negative word for an int": ('node { name: "a" attr { key: "N" value { i: -inf } } }', 1, 46,
                                   "Expected integer, got: inf"),
    "an octal int past its range": ('node { name: "a" attr { key: "v" value { tensor { int_val: 077777777777 } } } }',
                                    1, 60, "Integer out of range (077777777777)"),
    "a bad escape in a string left open": ('node { name: "a\\qb\n" }', 1, 17,
                                           "Invalid escape sequence in string literal."),
    "an escaped quote left open": ('node { name: "ab\\"\n}', 1, 19, "String literals cannot cross line boundaries."),
    "a tab before the mistake": ('node {\tnme: "a" }', 1, 12,  # a tab runs to column 8
                                 'Message type "graphdef.NodeDef" has no field named "nme".'),
}


def _refused_alike(runner, capsys, path, line, column, why):
    message = f"{path}: not a text-format GraphDef (line {line} column {column}: {why})\n"
    assert graphrun(capsys, "run", path)[::2] == (3, "graphrun: " + message)
    assert run_cc(runner, "run", path)[::2] == (3, "graphrun-cc: " + message)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_text_graph_that_does_not_parse_is_named_alike(runner, tmp_path, capsys, case):
    text, line, column, why = CASES[case]
    path = tmp_path / "model.pbtxt"
    path.write_text(text)
    _refused_alike(runner, capsys, path, line, column, why)


# Bytes outside string literals: C++ refuses any that is not ASCII, or is a control character, as it
# reads the token (run_fuzz.py --surface pbtxt found graphrun's SystemError on a 0xff in an enum)
RAW = {
    "a byte past ASCII in an enum value": (
        b'node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: \xffT_FLOAT } } }\n', 1, 70,
        "Interpreting non ascii codepoint 255."),
    "a byte past ASCII inside a field name": (b'node { n\xffame: "x" }\n', 1, 9,
                                              "Interpreting non ascii codepoint 255."),
    "UTF-8 before the first token": (b'  \n   \xc3\xa9 node { name: "x" }\n', 2, 4,
                                     "Interpreting non ascii codepoint 195."),
    "a control character": (b'node { name: "x" \x01 }\n', 1, 18, "Invalid control characters encountered in text."),
}


@pytest.mark.parametrize("case", sorted(RAW))
def test_a_raw_byte_outside_strings_is_named_alike(runner, tmp_path, capsys, case):
    data, line, column, why = RAW[case]
    path = tmp_path / "model.pbtxt"
    path.write_bytes(data)
    _refused_alike(runner, capsys, path, line, column, why)


def test_non_ascii_in_comments_and_strings_is_kept(runner, tmp_path, capsys):
    path = tmp_path / "model.pbtxt"
    path.write_bytes('node { name: "x" op: "NoOp" attr { key: "a" value { s: "\u00e9" } } }  # caf\u00e9\n'.encode())
    assert graphrun(capsys, "run", path) == run_cc(runner, "run", path)
    assert graphrun(capsys, "run", path)[0] == 0
