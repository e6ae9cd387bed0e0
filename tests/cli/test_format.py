"""graphrun's number formatting: the output contract's digits for every dtype, in the formatter and
through the command line (tests/cli/test_graphrun.py has the rest of graphrun's command line)."""

import numpy as np
import pytest

import graphdef as tf
from graphdef.client.output_format import format_json, format_line, format_value
from tests.support.graphrun_helpers import ok, save_model


# -- number formatting --------------------------------------------------------------------

FORMAT_TABLE = [
    (np.float64(3.75), "3.75"),
    (np.float64(3.0), "3.0"),
    (np.float64(1e-05), "1e-05"),
    (np.float64(0.0001), "0.0001"),
    (np.float64(1e16), "1e+16"),
    (np.float64(1.5e16), "1.5e+16"),
    (np.float64(9999999999999998.0), "9999999999999998.0"),
    (np.float64(1e100), "1e+100"),
    (np.float64(123456.0), "123456.0"),
    (np.float64(-0.0), "-0.0"),
    (np.float64(0.1), "0.1"),
    (np.float64(np.nan), "nan"),
    (np.float64(np.inf), "inf"),
    (np.float64(-np.inf), "-inf"),
    (np.float32(0.1), "0.1"),
    (np.float32(1) / np.float32(3), "0.33333334"),
    (np.float32(16777216.0), "16777216.0"),
    (np.float32(134217728.0), "134217730.0"),
    (np.float32(1e20), "1e+20"),
    (np.float32(1e-5), "1e-05"),
    (np.float32(-0.0), "-0.0"),
    (np.float32(np.nan), "nan"),
    (np.float32(-np.inf), "-inf"),
    (np.float32(3.4028235e38), "3.4028235e+38"),
    (np.float32(1e-45), "1e-45"),
    (np.int64(-(2 ** 63)), "-9223372036854775808"),
    (np.int64(2 ** 63 - 1), "9223372036854775807"),
    (np.uint64(2 ** 64 - 1), "18446744073709551615"),
    (np.int8(-128), "-128"),
    (np.uint8(255), "255"),
    (np.bool_(True), "true"),
    (np.bool_(False), "false"),
    (np.array([[1, 2], [3, 4]], np.float32), "[[1.0, 2.0], [3.0, 4.0]]"),
    (np.zeros((2, 0), np.int32), "[[], []]"),
    (np.zeros((0, 2), np.int32), "[]"),
    (np.zeros((2, 1, 0, 3), np.int32), "[[[]], [[]]]"),
    (np.array([[[True], [False]]]), "[[[true], [false]]]"),
]


@pytest.mark.parametrize("value, text", FORMAT_TABLE, ids=[t for _, t in FORMAT_TABLE])
def test_format_value(value, text):
    assert format_value(value) == text


def test_formatting_through_the_cli(capsys, tmp_path):
    """Constants nobody consumes are all default fetches, printed in file order."""
    scalars = [(v, t) for v, t in FORMAT_TABLE if np.ndim(v) == 0]

    def build():
        for i, (value, _) in enumerate(scalars):
            tf.constant(np.asarray(value), name=f"c{i}")
    path = save_model(tmp_path / "table.pb", build)
    expected = "".join(f"c{i}:0 {np.asarray(v).dtype.name} [] = {t}\n" for i, (v, t) in enumerate(scalars))
    assert ok(capsys, path) == expected


def test_json_nonfinite_values_are_strings():
    values = np.array([np.nan, np.inf, -np.inf, 1.5], np.float32)
    text = format_json([("v:0", values), ("w:0", np.float64(-np.inf))])
    assert text == ('{"outputs": [{"name": "v:0", "dtype": "float32", "shape": [4], '
                    '"values": ["nan", "inf", "-inf", 1.5]}, '
                    '{"name": "w:0", "dtype": "float64", "shape": [], "values": "-inf"}]}')
    assert format_line("v:0", values) == "v:0 float32 [4] = [nan, inf, -inf, 1.5]"


def reference_float(value):
    """The contract's rule spelled out: shortest digits (numpy, unique=True), repr's layout."""
    if np.isnan(value):
        return "nan"
    if np.isinf(value):
        return "-inf" if value < 0 else "inf"
    sci = np.format_float_scientific(value, unique=True, trim="-")
    sign = "-" if sci.startswith("-") else ""
    mantissa, exponent = sci.lstrip("-").split("e")
    digits, e = mantissa.replace(".", ""), int(exponent)
    if -4 <= e < 16:
        if e >= 0:
            whole, frac = digits[:e + 1].ljust(e + 1, "0"), digits[e + 1:]
        else:
            whole, frac = "0", "0" * (-e - 1) + digits
        return f"{sign}{whole}.{frac or '0'}"
    tail = "." + digits[1:] if len(digits) > 1 else ""
    return f"{sign}{digits[0]}{tail}e{'-' if e < 0 else '+'}{abs(e):02d}"


@pytest.mark.parametrize("dtype, bits", [(np.float32, np.uint32), (np.float64, np.uint64), (np.float16, np.uint16)])
def test_fast_float_path_matches_the_rule(dtype, bits):
    """Random bit patterns (every exponent, subnormals, nan, inf) through the vectorised path."""
    info = np.iinfo(bits)
    raw = np.random.default_rng(1).integers(0, int(info.max), size=20000, dtype=bits, endpoint=True)
    values = raw.view(dtype)
    printed = format_value(values)[1:-1].split(", ")
    expected = [reference_float(v) for v in values]
    assert printed == expected
