"""Deeply nested GraphDefs: an AttrValue holding a func whose attrs hold AttrValues nests
without end, and protobuf's parsers and every walk over attrs recurse. Both runtimes refuse more
than 100 levels (as TensorFlow's readers do) with one line, in the same words, for text files;
binary files stop at protobuf's limit of 100 in both. Files are built here, as text and as raw
wire bytes, with the nesting counted by hand."""

import pytest

from tests.support.cc_helpers import run_cc
from tests.support.graphrun_helpers import graphrun

CONST = ('node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } '
         'attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }\n')


def nested_value(funcs, lists=0):
    """An AttrValue's text nesting `funcs` funcs (three levels each: func, attr, value), the
    outermost `lists` of them inside a list (one level more each)."""
    text = "i: 1"
    for j in range(funcs):
        text = f'func {{ name: "f" attr {{ key: "k" value {{ {text} }} }} }}'
        if j >= funcs - lists:
            text = f"list {{ {text} }}"
    return text


def text_model(levels):
    """A model whose attr 'deep' of node 'x' makes its braces nest exactly `levels` deep (node,
    attr and value are three)."""
    funcs, lists = divmod(levels - 3, 3)
    value = nested_value(funcs, lists)
    return CONST + ('node { name: "x" op: "Identity" input: "c" attr { key: "T" value { type: DT_FLOAT } } '
                    f'attr {{ key: "deep" value {{ {value} }} }} }}\n')


def depth_of(text):
    depth = deepest = 0
    for c in text:
        depth += c == "{"
        depth -= c == "}"
        deepest = max(deepest, depth)
    return deepest


def both(runner, path, capsys):
    """graphrun's and graphrun-cc's (exit code, stdout, stderr after the program's name)."""
    code, out, err = graphrun(capsys, path)
    cc_code, cc_out, cc_err = run_cc(runner, path)
    return (code, out, err.removeprefix("graphrun: ")), (cc_code, cc_out, cc_err.removeprefix("graphrun-cc: "))


def test_the_text_models_nest_as_counted():
    for levels in (99, 100, 101, 102, 3000):
        assert depth_of(text_model(levels)) == levels


@pytest.mark.parametrize("levels", [99, 100])
def test_text_nesting_up_to_the_limit_runs(runner, tmp_path, capsys, levels):
    path = tmp_path / "model.pbtxt"
    path.write_text(text_model(levels))
    py, cc = both(runner, path, capsys)
    assert py == cc == (0, "x:0 float32 [] = 1.0\n", "")


@pytest.mark.parametrize("levels", [101, 3000, 30000])
@pytest.mark.parametrize("verb", ["run", "inspect"])
def test_text_nesting_past_the_limit_is_one_line_in_both(runner, tmp_path, capsys, levels, verb):
    path = tmp_path / "model.pbtxt"
    path.write_text(text_model(levels))
    code, out, err = graphrun(capsys, verb, path)
    cc_code, cc_out, cc_err = run_cc(runner, verb, path)
    line = f"{path}: nesting deeper than 100 levels (at node 'x' attr 'deep')\n"
    assert (code, out, err) == (3, "", "graphrun: " + line)
    assert (cc_code, cc_out, cc_err) == (3, "", "graphrun-cc: " + line)


def test_nesting_outside_a_node_names_the_line(runner, tmp_path, capsys):
    # a function library nested past the limit: no node to name, so the line where it happens
    body = ('library {\n function {\n signature { name: "f" }\n attr { key: "a" value { ' + nested_value(40)
            + " } }\n }\n}\n")
    path = tmp_path / "model.pbtxt"
    path.write_text(CONST + body)
    py, cc = both(runner, path, capsys)
    assert py == cc == (3, "", f"{path}: nesting deeper than 100 levels (at line 5)\n")


def test_braces_in_strings_and_comments_do_not_count(runner, tmp_path, capsys):
    # 200 braces a naive count would see, none of them structure
    noise = '# {{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{\n'
    name = "{" * 100 + "\\\"" + "<" * 50
    text = noise + text_model(99).replace('attr { key: "deep"', f'attr {{ key: "note" value {{ s: "{name}" }} }} '
                                          'attr { key: "deep"')
    path = tmp_path / "model.pbtxt"
    path.write_text(text)
    py, cc = both(runner, path, capsys)
    assert py == cc == (0, "x:0 float32 [] = 1.0\n", "")


# -- binary: the same nesting as wire bytes -------------------------------------------------

def varint(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, payload):
    """A length-delimited field: a string or a nested message."""
    payload = payload.encode() if isinstance(payload, str) else payload
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def binary_model(levels):
    """GraphDef bytes whose node 'x' nests `levels` messages deep, a multiple of 3 (the GraphDef
    itself is not a level, as protobuf counts: node, attr entry and AttrValue are three, and so
    are func, its attr entry and that entry's AttrValue)."""
    assert levels % 3 == 0
    value = b"\x18\x01"  # AttrValue { i: 1 }
    for _ in range(levels // 3 - 1):
        value = field(10, field(1, "f") + field(2, field(1, "k") + field(2, value)))
    entry = field(1, "deep") + field(2, value)
    node = field(1, "x") + field(2, "Identity") + field(3, "c") + field(5, field(1, "T") + field(2, b"\x30\x01"))
    const = field(1, "c") + field(2, "Const") + field(5, field(1, "dtype") + field(2, b"\x30\x01")) + field(
        5, field(1, "value") + field(2, field(8, b"\x08\x01" + field(2, b"") + b"\x2a\x04\x00\x00\x80\x3f")))
    return field(1, const) + field(1, node + field(5, entry))


def test_binary_nesting_within_the_limit_runs(runner, tmp_path, capsys):
    path = tmp_path / "model.pb"
    path.write_bytes(binary_model(99))
    py, cc = both(runner, path, capsys)
    assert py == cc == (0, "x:0 float32 [] = 1.0\n", "")


@pytest.mark.parametrize("levels", [102, 3000, 30000])
def test_binary_nesting_past_the_limit_is_one_line_in_both(runner, tmp_path, capsys, levels):
    path = tmp_path / "model.pb"
    path.write_bytes(binary_model(levels))
    line = f"{path}: not a GraphDef (the protobuf does not parse, or nests deeper than 100 levels)\n"
    py, cc = both(runner, path, capsys)
    assert py == cc == (3, "", line)


# -- the bulk depth count against a plain scan ----------------------------------------------

def scanned_depth(text):
    """The deepest brace nesting of `text`, read a character at a time: strings (ended by their
    quote or a newline, a backslash escaping the next character) and comments do not count, and a
    closing brace at depth 0 is ignored, as graphrun-cc's scan reads text."""
    depth = deepest = i = 0
    while i < len(text):
        c = text[i]
        if c == "#":
            while i < len(text) and text[i] != "\n":
                i += 1
        elif c in "\"'":
            i += 1
            while i < len(text) and text[i] not in (c, "\n"):
                i += 2 if text[i] == "\\" and i + 1 < len(text) and text[i + 1] != "\n" else 1
            i += i < len(text) and text[i] == c
            continue
        elif c in "{<":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "}>":
            depth = max(depth - 1, 0)
        i += 1
    return deepest


def test_the_bulk_count_matches_a_plain_scan():
    import random

    from graphdef.wire.nesting import MAX_NESTING, _deepest
    rng = random.Random(35)
    for _ in range(3000):
        text = "".join(rng.choice("{{{}}<>\"'\\#\na :") for _ in range(rng.randrange(1, 60)))
        expected = scanned_depth(text)
        got = _deepest(text.encode())
        # a stray closing brace sends the bulk count to the exact scan, with a count over the limit
        assert got == expected or got == MAX_NESTING + 1, (text, got, expected)
