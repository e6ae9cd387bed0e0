"""How deep a text GraphDef's messages may nest, checked before parsing it.

Only an AttrValue holding a func (whose attrs hold AttrValues) nests without end; protobuf's
text parser and every walk over attrs recurse, so a file nested thousands deep would end in
RecursionError. TensorFlow's readers stop at 100 levels; so do both runtimes, and graphrun-cc
scans text the same way (runner/graph/graph.cc, check_text_nesting), so both word it alike.
"""
import re

MAX_NESTING = 100

# newlines (for line numbers), comments, quoted strings (to skip their braces), braces, words
_TOKENS = re.compile(rb"""\n|\#[^\n]*|"((?:[^"\\\n]|\\[^\n])*)"?|'((?:[^'\\\n]|\\[^\n])*)'?|[{}<>]|[\w.+-]+""")


class NestingError(ValueError):
    """The text nests deeper than MAX_NESTING; the message says where."""


def check_text_nesting(data):
    """Raises NestingError if the braces of text-format `data` (bytes) nest deeper than
    MAX_NESTING, naming the node and attr where that happens (or else the line)."""
    if b"func" not in data:  # without an AttrValue func, a GraphDef's schema nests a few levels at most
        return
    fields = []
    word = b""
    node_name = attr_key = None
    line = 1
    for match in _TOKENS.finditer(data):
        token = match.group()
        first = token[:1]
        if first == b"\n":
            line += 1
        elif first == b"#":
            continue
        elif first in (b'"', b"'"):
            value = match.group(1) if first == b'"' else match.group(2)
            if len(fields) == 1 and fields[0] == b"node" and word == b"name" and node_name is None:
                node_name = value
            elif fields[:2] == [b"node", b"attr"] and len(fields) == 2 and word == b"key" and attr_key is None:
                attr_key = value
            word = b""
        elif first in (b"{", b"<"):
            if not fields:
                node_name = None
            if len(fields) == 1:
                attr_key = None
            fields.append(word)
            word = b""
            if len(fields) > MAX_NESTING:
                where = _where(fields, node_name, attr_key, line)
                raise NestingError(f"nesting deeper than {MAX_NESTING} levels (at {where})")
        elif first in (b"}", b">"):
            if fields:
                fields.pop()
            word = b""
        else:
            word = token


def _where(fields, node_name, attr_key, line):
    if fields[0] != b"node" or node_name is None:
        return f"line {line}"
    where = f"node '{_text(node_name)}'"
    if fields[1] == b"attr" and attr_key is not None:
        where += f" attr '{_text(attr_key)}'"
    return where


def _text(raw):
    """The name as the file writes it, escapes and all (graphrun-cc prints the same bytes)."""
    return raw.decode("utf-8", "backslashreplace")
