"""Reading the committed case directories and judging a runtime's answers against them.

Shared by every replay (Python Session, graphrun, the C++ runner, TensorFlow), so
they all apply one notion of "equal": dtype and shape must match exactly; exact
cases compare bits (any NaN equals any NaN, but -0.0 is not +0.0); tolerant cases
compare like numpy.allclose with NaN and inf required in the same places.
"""

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

CASES_DIR = Path(__file__).resolve().parent / "cases"


@dataclass(frozen=True)
class CaseFiles:
    name: str
    directory: Path
    description: str
    feeds: dict        # placeholder name -> ndarray
    feed_files: dict   # placeholder name -> Path of its .npy
    fetches: list      # tensor names, "node:0"
    expected: list     # ndarrays, parallel to fetches
    exact: bool
    rtol: float
    atol: float
    skip: dict         # runtime -> reason

    @property
    def model(self):
        return self.directory / "model.pb"


def case_dirs():
    return sorted(p for p in CASES_DIR.iterdir() if (p / "case.json").is_file()) if CASES_DIR.is_dir() else []


def load(directory):
    directory = Path(directory)
    spec = json.loads((directory / "case.json").read_text())
    feed_files = {name: directory / file for name, file in spec["feeds"].items()}
    return CaseFiles(
        name=directory.name, directory=directory, description=spec["description"],
        feeds={name: np.load(path, allow_pickle=False) for name, path in feed_files.items()},
        feed_files=feed_files, fetches=list(spec["fetches"]),
        expected=[np.load(directory / f, allow_pickle=False) for f in spec["expected"]],
        exact=bool(spec["exact"]), rtol=float(spec["rtol"]), atol=float(spec["atol"]),
        skip=dict(spec.get("skip", {})))


def from_json_output(output):
    """One entry of a runner's --json "outputs" list -> (name, ndarray of its declared dtype)."""
    dtype = np.dtype(output["dtype"])
    shape = tuple(output["shape"])
    special = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}

    def scalar(v):
        return special[v] if isinstance(v, str) else v

    def walk(v):
        return [walk(x) for x in v] if isinstance(v, list) else scalar(v)

    values = walk(output["values"])
    if dtype.kind in "iub":
        array = np.array(values, dtype=dtype)  # from Python ints: int64 keeps every bit
    else:
        # a float32 printed shortest-round-trip parses back to the same float32 via float64
        array = np.array(values, dtype=np.float64).astype(dtype)
    if array.size == 0:
        array = np.zeros(shape, dtype)
    if array.shape != shape:
        raise AssertionError(f"{output['name']}: values have shape {list(array.shape)}, "
                             f"but the output says {list(shape)}")
    return output["name"], array


def mismatch(actual, expected, case):
    """None when `actual` conforms to `expected` under the case's tolerance, else why not."""
    actual = np.asarray(actual)
    if actual.dtype != expected.dtype:
        return f"dtype {actual.dtype}, expected {expected.dtype}"
    if actual.shape != expected.shape:
        return f"shape {list(actual.shape)}, expected {list(expected.shape)}"
    if expected.dtype.kind != "f":
        bad = actual != expected
    elif case.exact:
        nan_a, nan_e = np.isnan(actual), np.isnan(expected)
        bits = f"u{expected.dtype.itemsize}"
        bad = (nan_a != nan_e) | (~nan_e & (actual.view(bits) != expected.view(bits)))
    else:
        with np.errstate(all="ignore"):
            close = np.isclose(actual, expected, rtol=case.rtol, atol=case.atol, equal_nan=True)
        bad = ~close
    if not np.any(bad):
        return None
    where = np.argwhere(bad)[:4] if actual.ndim else [()]
    shown = ", ".join(f"at {list(map(int, i))}: got {actual[tuple(i)]!r}, expected {expected[tuple(i)]!r}"
                      for i in where)
    how = "bit for bit" if case.exact or expected.dtype.kind != "f" else f"rtol={case.rtol}, atol={case.atol}"
    return f"{int(np.sum(bad))} of {expected.size} values differ ({how}): {shown}"


def check_outputs(runtime, case, outputs):
    """Asserts that `outputs` (fetch name -> array, or a list parallel to the fetches) match."""
    if isinstance(outputs, dict):
        missing = [f for f in case.fetches if f not in outputs]
        assert not missing, f"{runtime} on {case.name}: no output for {missing}; got {sorted(outputs)}"
        outputs = [outputs[f] for f in case.fetches]
    assert len(outputs) == len(case.fetches), \
        f"{runtime} on {case.name}: {len(outputs)} outputs for {len(case.fetches)} fetches"
    problems = []
    for fetch, actual, expected in zip(case.fetches, outputs, case.expected):
        why = mismatch(actual, expected, case)
        if why:
            problems.append(f"{fetch}: {why}")
    assert not problems, f"{runtime} on {case.name} ({case.description}):\n  " + "\n  ".join(problems)
