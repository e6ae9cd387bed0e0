"""TF1 programs written against tensorflow.compat.v1, each a `main(tf)` of the module it is handed.

tests/tf/test_tf1_programs.py runs every program twice, with real TensorFlow (tf.compat.v1 with
v2 behaviour disabled, the way TF1 code runs on TensorFlow 2) and with `import graphdef as
tf`, and compares what they print. TensorFlow's output is also committed under
transcripts/, so the graphdef side is checked where TensorFlow is not installed;
`.venv/bin/python -m tests.tf1_programs --write` rewrites the transcripts.

Programs print numbers with a fixed, modest precision, and the comparison allows one unit
in the last printed digit (float32 sums in another order can round the other way); every
other character, integers included, must be equal.
"""

import contextlib
import importlib
import io
import os
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRANSCRIPTS = HERE / "transcripts"

PROGRAMS = (
    "linear_regression",
    "softmax_regression",
    "mlp_momentum",
    "graph_basics",
    "freeze_and_import",
    "save_and_restore",
    "summaries",
    "get_variable_names",
    "load_frozen_graph",
    "variable_scope_training",
)

# Programs using TF1 behaviour graphdef does not offer yet: program -> what is missing.
# They run as strict xfails, so each line must go once graphdef grows the names.
NEEDS = {}  # program -> what graphdef lacks to run it as TensorFlow does; none today


def tensorflow_v1():
    """tensorflow.compat.v1 with TF2 behaviour off: graph mode, RefVariables, as TF1 programs expect."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before the import, to quiet its C++ logging
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()
    tf.logging.set_verbosity(tf.logging.ERROR)
    return tf


def graphdef_module():
    import graphdef
    import graphdef.summary  # noqa: F401  (binds graphdef.summary, as tf.summary is bound)
    return graphdef


def run(tf, name):
    """What program `name` prints when handed `tf`, on a fresh default graph."""
    module = importlib.import_module(f"{__name__}.{name}")
    tf.reset_default_graph()
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        module.main(tf)
    return buffer.getvalue()


_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _unit(token):
    """One unit in the last printed digit of a decimal token; None for an integer (compared exactly)."""
    mantissa, _, exponent = token.lower().partition("e")
    if "." not in mantissa and not exponent:
        return None
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return 10.0 ** (int(exponent or 0) - decimals)


def differences(expected, actual):
    """Lines where `actual` differs from `expected` beyond one unit in the last printed digit."""
    problems = []
    want, got = expected.splitlines(), actual.splitlines()
    if len(want) != len(got):
        problems.append(f"{len(got)} lines printed, expected {len(want)}")
    for number, (a, b) in enumerate(zip(want, got), 1):
        if a == b:
            continue
        if _NUMBER.sub("#", a) == _NUMBER.sub("#", b) and all(
                _close(x, y) for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b))):
            continue
        problems.append(f"line {number}:\n    expected: {a}\n    printed:  {b}")
    return problems


def _close(x, y):
    if x == y:
        return True
    units = [u for u in (_unit(x), _unit(y)) if u is not None]
    if len(units) < 2:
        return False  # integers, or an integer against a decimal: exactly, or not at all
    return abs(float(x) - float(y)) <= max(units) * 1.001
