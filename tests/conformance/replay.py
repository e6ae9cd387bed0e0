"""Reading the committed case directories and judging a runtime's answers against them.

Shared by every replay (Python Session, graphrun, the C++ runner, TensorFlow), so
they all apply one notion of "equal", the numerics policy's (graphdef/framework/numerics.py): dtype
and shape must match exactly; each fetch has the tolerance its ops declare, written into
case.json when the case is generated.
"""

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphdef.framework.numerics import Tolerance
from graphdef.ops.registry import numerics_of

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
    tolerances: list   # graphdef.framework.numerics.Tolerance, parallel to fetches
    skip: dict         # runtime -> reason

    @property
    def exact(self):
        return all(t.exact for t in self.tolerances)

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
        tolerances=[Tolerance(float(t["rtol"]), float(t["atol"]), bool(t["per_tensor"]), bool(t["zero_sign"]))
                    for t in spec["tolerances"]],
        skip=dict(spec.get("skip", {})))


def tolerance_spec(graph_def, fetches, expected):
    """case.json's "tolerances": each fetch's, from the numerics its ops declare."""
    out = []
    for name, value in zip(fetches, expected):
        t = numerics_of(graph_def, name).tolerance(np.asarray(value).dtype)
        out.append({"rtol": t.rtol, "atol": t.atol, "per_tensor": t.per_tensor, "zero_sign": t.zero_sign})
    return out


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


def cli_args(case, json_output=True):
    """The command line graphrun and graphrun-cc share for replaying `case`."""
    args = [str(case.model)]
    for name, path in case.feed_files.items():
        args += ["--feed", f"{name}=@{path}"]
    for fetch in case.fetches:
        args += ["--fetch", fetch]
    return args + (["--json"] if json_output else [])


def parse_json_outputs(runtime, case, stdout):
    """The arrays of a runner's --json stdout, in the order of the case's fetches."""
    lines = stdout.splitlines()
    assert len(lines) == 1, f"{runtime} --json on {case.name} printed {len(lines)} lines, expected one"
    outputs = [from_json_output(o) for o in json.loads(lines[0])["outputs"]]
    names = [name for name, _ in outputs]
    assert names == case.fetches, f"{runtime} on {case.name}: outputs {names}, fetched {case.fetches}"
    return [value for _, value in outputs]


def check_outputs(runtime, case, outputs):
    """Asserts that `outputs` (fetch name -> array, or a list parallel to the fetches) match."""
    if isinstance(outputs, dict):
        missing = [f for f in case.fetches if f not in outputs]
        assert not missing, f"{runtime} on {case.name}: no output for {missing}; got {sorted(outputs)}"
        outputs = [outputs[f] for f in case.fetches]
    assert len(outputs) == len(case.fetches), \
        f"{runtime} on {case.name}: {len(outputs)} outputs for {len(case.fetches)} fetches"
    problems = []
    for fetch, actual, expected, tolerance in zip(case.fetches, outputs, case.expected, case.tolerances):
        why = tolerance.mismatch(actual, expected)
        if why:
            problems.append(f"{fetch}: {why}")
    assert not problems, f"{runtime} on {case.name} ({case.description}):\n  " + "\n  ".join(problems)
