"""RegexReplace, StaticRegexReplace, RegexFullMatch, StaticRegexFullMatch with RE2, as TensorFlow.

TensorFlow's patterns are RE2 syntax, matched over the bytes in UTF-8 mode; Python's `re`
reads some patterns differently (it has lookarounds and backreferences, RE2 refuses them;
\\Z, \\C, possessive and [[:alpha:]] classes differ), so the google-re2 package runs them. The
global replace loop and the rewrite string (\\0-\\9 and \\\\ only) follow RE2's GlobalReplace:
an empty match right after the previous match is skipped one UTF-8 character ahead, and a
malformed rewrite is not an error (TensorFlow passes it to RE2, which only logs it).
"""

import functools

import numpy as np

from graphdef.framework import limits
from graphdef.framework.errors import InvalidArgumentError
from graphdef.framework.numerics import EXACT
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, build, define, same_as_input
from graphdef.ops.strings import as_array, check_string_bytes, map_strings


def _re2():
    try:
        import re2
    except ImportError:  # a dependency of the package; missing only in a broken install
        raise InvalidArgumentError("regular expressions need the google-re2 package "
                                   "(pip install google-re2)") from None
    return re2


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern):
    """RE2's compiled `pattern` (bytes), or TF's InvalidArgumentError line."""
    re2 = _re2()
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error as e:
        reason = e.args[0].decode("utf-8", "replace") if e.args and isinstance(e.args[0], bytes) else str(e)
        raise InvalidArgumentError(f"Invalid pattern: {pattern.decode('utf-8', 'replace')}, error: {reason}") \
            from None


@functools.lru_cache(maxsize=256)
def parse_rewrite(rewrite):
    """(parts, highest group named, whether it is well formed) of RE2's rewrite string: \\N names
    group N, \\\\ is a backslash; parts (bytes and group numbers) stop at a malformed escape,
    where RE2's Rewrite stops writing."""
    parts, i, literal, highest = [], 0, bytearray(), 0
    while i < len(rewrite):
        c = rewrite[i]
        if c != 0x5C:
            literal.append(c)
            i += 1
            continue
        nxt = rewrite[i + 1] if i + 1 < len(rewrite) else None
        if nxt == 0x5C:
            literal.append(0x5C)
        elif nxt is not None and 0x30 <= nxt <= 0x39:
            parts += [bytes(literal), nxt - 0x30]
            highest = max(highest, nxt - 0x30)
            literal = bytearray()
        else:
            parts.append(bytes(literal))
            return tuple(parts), highest, False
        i += 2
    parts.append(bytes(literal))
    return tuple(parts), highest, True


def _rewritten(match, parts):
    return b"".join(p if isinstance(p, bytes) else (match.group(p) or b"") for p in parts)


def _utf8_step(text, p):
    """How far RE2 steps past an empty match at p: one whole UTF-8 character, else one byte."""
    lead = text[p]
    size = 1 if lead < 0x80 else 2 if 0xC2 <= lead < 0xE0 else 3 if 0xE0 <= lead < 0xF0 else \
        4 if 0xF0 <= lead < 0xF5 else 1
    if size > 1:
        try:
            text[p:p + size].decode("utf-8")
        except UnicodeDecodeError:
            size = 1
    return size


def replace(regex, rewrite, text, replace_global):
    """RE2's Replace or GlobalReplace of `text`. As RE2: a rewrite naming a group the pattern lacks
    changes nothing; a malformed escape makes Replace change nothing and GlobalReplace write each
    match's rewrite up to the escape."""
    parts, highest, well_formed = rewrite
    if highest > regex.groups or (not replace_global and not well_formed):
        return text
    if not replace_global:
        match = regex.search(text)
        return text if match is None else text[:match.start()] + _rewritten(match, parts) + text[match.end():]
    out, p, last_end, count, written, budget = [], 0, -1, 0, 0, limits.max_tensor_bytes()
    while p <= len(text):
        match = regex.search(text, p)
        if match is None:
            break
        start, end = match.span()
        if p < start:
            out.append(text[p:start])
        if start == last_end and start == end:  # an empty match where the last one ended: step ahead
            if p < len(text):
                step = _utf8_step(text, p)
                out.append(text[p:p + step])
                p += step
            else:
                p += 1
            continue
        piece = _rewritten(match, parts)
        out.append(piece)
        written += start - p + len(piece)
        if written > budget:  # a short pattern's many matches can each write a long rewrite
            check_string_bytes(written + len(text) - end)
        p = last_end = end
        count += 1
    if count == 0:
        return text
    if p < len(text):
        out.append(text[p:])
    return b"".join(out)


def _scalar(value, what):
    value = as_array(value)
    if value.ndim:
        raise InvalidArgumentError(f"{what} must be scalar, but received {show(TensorShape(value.shape))}")
    return value[()]


def _regex_replace(input, pattern, rewrite, *, replace_global):  # noqa: A002 - TF's argument names
    regex = compile_pattern(_scalar(pattern, "Pattern"))
    parsed = parse_rewrite(_scalar(rewrite, "Rewrite"))
    return map_strings(lambda s: replace(regex, parsed, s, replace_global), input)


def _static_regex_replace(input, *, pattern, rewrite, replace_global):  # noqa: A002
    return _regex_replace(input, _bytes(pattern), _bytes(rewrite), replace_global=replace_global)


def _bytes(value):
    return np.array(value.encode("utf-8") if isinstance(value, str) else value, dtype=object)


def _infer_scalars(*indices):
    def infer(ctx):
        for i in indices:
            if ctx.shape(i).ndims not in (None, 0):
                raise ctx.error(f"input {i} must be a scalar, got shape {show(ctx.shape(i))}")
        return [ctx.shape(0)]
    return infer


REGEX_REPLACE = define(
    "RegexReplace", "input: string, pattern: string, rewrite: string -> output: string",
    doc="Each string with the RE2 pattern's matches (the first, or all) replaced by rewrite (\\1 names a group).",
    attrs={"replace_global": Attr("bool", True)}, infer=_infer_scalars(1, 2), kernel=_regex_replace,
    grad=NOT_DIFFERENTIABLE, numerics=EXACT)
STATIC_REGEX_REPLACE = define(
    "StaticRegexReplace", "input: string -> output: string",
    doc="RegexReplace with the pattern and rewrite given as attrs.",
    attrs={"pattern": Attr("string"), "rewrite": Attr("string"), "replace_global": Attr("bool", True)},
    infer=same_as_input(), kernel=_static_regex_replace, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _full_match(input, pattern):  # noqa: A002
    regex = compile_pattern(_scalar(pattern, "Pattern"))
    x = as_array(input)
    return np.array([regex.fullmatch(s) is not None for s in x.reshape(-1).tolist()], dtype=bool).reshape(x.shape)


def _static_full_match(input, *, pattern):  # noqa: A002
    return _full_match(input, _bytes(pattern))


REGEX_FULL_MATCH = define(
    "RegexFullMatch", "input: string, pattern: string -> output: bool",
    doc="Whether the RE2 pattern matches each whole string.",
    infer=_infer_scalars(1), kernel=_full_match, grad=NOT_DIFFERENTIABLE, numerics=EXACT)
STATIC_REGEX_FULL_MATCH = define(
    "StaticRegexFullMatch", "input: string -> output: bool",
    doc="RegexFullMatch with the pattern given as an attr.",
    attrs={"pattern": Attr("string")}, infer=same_as_input(), kernel=_static_full_match, grad=NOT_DIFFERENTIABLE,
    numerics=EXACT)


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):  # noqa: A002
    """tf.strings.regex_replace: StaticRegexReplace for Python strings, RegexReplace for tensors (as TF)."""
    if isinstance(pattern, (str, bytes)) and isinstance(rewrite, (str, bytes)):
        return build("StaticRegexReplace", [input], name=name, default_name="StaticRegexReplace",
                     attrs={"pattern": pattern, "rewrite": rewrite, "replace_global": replace_global}).outputs[0]
    return build("RegexReplace", [input, pattern, rewrite], name=name, default_name="RegexReplace",
                 attrs={"replace_global": replace_global}).outputs[0]


def regex_full_match(input, pattern, name=None):  # noqa: A002
    if isinstance(pattern, (str, bytes)):
        return build("StaticRegexFullMatch", [input], name=name, default_name="StaticRegexFullMatch",
                     attrs={"pattern": pattern}).outputs[0]
    return build("RegexFullMatch", [input, pattern], name=name, default_name="RegexFullMatch").outputs[0]
