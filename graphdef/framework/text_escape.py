"""Control characters from files and requests written as \\xNN, so a model or a request cannot
drive the terminal or a log reader; graphrun-cc writes the same (runner/cli/text_escape.cc)."""

import re

_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_CONTROLS_BUT_NEWLINE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def _hex(match):
    return f"\\x{ord(match.group()):02x}"


def escape_controls(text):
    """`text` with each control character written as \\xNN, as graphrun-cc writes its errors."""
    return _CONTROLS.sub(_hex, text)


def escape_text(text):
    """A report of many lines with every control character but its newlines written as \\xNN, as
    graphrun-cc writes its reports."""
    return _CONTROLS_BUT_NEWLINE.sub(_hex, text)
