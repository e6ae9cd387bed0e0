"""How deep a text GraphDef's messages may nest, checked before parsing it.

Only an AttrValue holding a func (whose attrs hold AttrValues) nests without end; protobuf's
text parser and every walk over attrs recurse, so a file nested thousands deep would end in
RecursionError. TensorFlow's readers stop at 100 levels; so do both runtimes, and graphrun-cc
scans text the same way (runner/graph/graph.cc, check_text_nesting), so both word it alike.
"""
import re

import numpy as np

MAX_NESTING = 100

# A brace or quoted string (strings are skipped, so their braces do not count), with the word
# before it if only spaces, colons and comments come between (a field's name: "node", "key");
# comments alone. Other words are passed over without a token each: this runs on large files.
_SEP = rb"""(?:[^\w.+\-"'{}<>#]|\#[^\n]*)*"""
_TOKENS = re.compile(rb"""(?:([\w.+-]+)""" + _SEP + rb""")?(?:"((?:[^"\\\n]|\\[^\n])*)"?|'((?:[^'\\\n]|\\[^\n])*)'?"""
                     rb"""|([{<])|[}>])|\#[^\n]*""")


class NestingError(ValueError):
    """The text nests deeper than MAX_NESTING; the message says where."""


def check_text_nesting(data):
    """Raises NestingError if the braces of text-format `data` (bytes) nest deeper than
    MAX_NESTING, naming the node and attr where that happens (or else the line)."""
    if b"func" not in data:  # without an AttrValue func, a GraphDef's schema nests a few levels at most
        return
    if _deepest(data) <= MAX_NESTING:
        return
    fields = []
    node_name = attr_key = None
    for match in _TOKENS.finditer(data):
        word, double, single, opening = match.groups()
        if double is not None or single is not None:
            value = double if double is not None else single
            depth = len(fields)
            if depth == 1 and word == b"name" and node_name is None and fields[0] == b"node":
                node_name = value
            elif depth == 2 and word == b"key" and attr_key is None and fields[0] == b"node" and fields[1] == b"attr":
                attr_key = value
        elif opening is not None:
            if not fields:
                node_name = None
            elif len(fields) == 1:
                attr_key = None
            fields.append(word or b"")
            if len(fields) > MAX_NESTING:
                line = data.count(b"\n", 0, match.start(4)) + 1
                where = _where(fields, node_name, attr_key, line)
                raise NestingError(f"nesting deeper than {MAX_NESTING} levels (at {where})")
        elif match.group().endswith((b"}", b">")):
            if fields:
                fields.pop()


_STRINGS_AND_COMMENTS = re.compile(rb""""[^"\\\n]*(?:\\[^\n][^"\\\n]*)*"?|'[^'\\\n]*(?:\\[^\n][^'\\\n]*)*'?|\#[^\n]*""")
_NOT_BRACES = bytes(b for b in range(256) if b not in b"{}<>")


def _deepest(data):
    """How deep the braces of `data` nest, as check_text_nesting counts them, computed in bulk:
    strings and comments dropped, then everything but braces; a cumulative sum of what is left."""
    braces = _STRINGS_AND_COMMENTS.sub(b"", data).translate(None, _NOT_BRACES)
    if not braces:
        return 0
    steps = np.frombuffer(braces, np.uint8)
    depth = np.cumsum(np.where((steps == ord("{")) | (steps == ord("<")), 1, -1), dtype=np.int64)
    if depth.min() < 0:  # a stray closing brace, which the scan ignores: let the scan count
        return MAX_NESTING + 1
    return int(depth.max())


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
