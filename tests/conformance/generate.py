"""Writes the conformance table (cases.py) to committed files, one directory per case.

    .venv/bin/python -m tests.conformance.generate            # rewrite tests/conformance/cases/
    .venv/bin/python -m tests.conformance.generate --check    # exit 1 if the files are stale

Each directory holds model.pb (deterministic binary GraphDef), feed_<name>.npy per
placeholder fed, expected_<fetch>.npy per fetched tensor, and case.json tying them
together. Runtimes replay the directories; they never need this module or the table.
"""

import argparse
import filecmp
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

import graphdef as tf
from graphdef.framework.numerics import canonical
from graphdef.wire.serialize import save

from . import replay

from . import table

ROOT = Path(__file__).resolve().parent / "cases"
REGENERATE = ".venv/bin/python -m tests.conformance.generate"


def file_stem(tensor_or_node_name):
    """A file-name-safe spelling of a graph name: 'scope/y:0' -> 'scope.y_0'."""
    return tensor_or_node_name.replace("/", ".").replace(":", "_")


def _check(case, graph, feeds, expected):
    """Catches mistakes in the table itself, so a typo cannot become a 'runtime bug'."""
    where = f"conformance case {case.name}"
    if not expected:
        raise ValueError(f"{where}: fetches nothing")
    for name, value in feeds.items():
        op = graph.get_operation_by_name(name)
        if op.type not in ("Placeholder", "PlaceholderWithDefault"):
            raise ValueError(f"{where}: feed '{name}' is a {op.type}, not a placeholder")
        t = op.outputs[0]
        if t.dtype.np != value.dtype or not t.shape.is_compatible_with(value.shape):
            raise ValueError(f"{where}: feed '{name}' is {value.dtype}{list(value.shape)}, "
                             f"the placeholder is {t.dtype.name}{t.shape.dims}")
    for name, value in expected.items():
        t = graph.get_tensor_by_name(name)
        if t.dtype.np != value.dtype or not t.shape.is_compatible_with(value.shape):
            raise ValueError(f"{where}: expected '{name}' is {value.dtype}{list(value.shape)}, "
                             f"the graph says {t.dtype.name}{t.shape.dims}")


def write_case(case, directory):
    graph = tf.Graph()
    with graph.as_default():
        feeds, expected = case.make()
    feeds = {k: np.asarray(v) for k, v in feeds.items()}
    expected = {k: np.asarray(v) for k, v in expected.items()}
    _check(case, graph, feeds, expected)

    tolerances = replay.tolerance_spec(graph.as_graph_def(), list(expected), list(expected.values()))
    directory.mkdir(parents=True)
    save(graph, directory / "model.pb")
    for name, value in feeds.items():
        np.save(directory / f"feed_{file_stem(name)}.npy", value, allow_pickle=False)
    for name, value in expected.items():
        np.save(directory / f"expected_{file_stem(name)}.npy", canonical(value), allow_pickle=False)
    spec = {
        "description": case.doc,
        "feeds": {name: f"feed_{file_stem(name)}.npy" for name in feeds},
        "fetches": list(expected),
        "expected": [f"expected_{file_stem(name)}.npy" for name in expected],
        "exact": all(t["rtol"] == 0 and t["atol"] == 0 for t in tolerances),
        "tolerances": tolerances,
        "skip": dict(case.skip),
    }
    (directory / "case.json").write_text(json.dumps(spec, indent=2, sort_keys=True) + "\n")


def generate(root=ROOT):
    """Writes every case under `root`, replacing whatever case directories were there.

    Everything is written to a scratch directory first, so a case that fails to build
    leaves the committed files untouched.
    """
    names = [c.name for c in table.CASES]
    written = list(table.CASES)
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"conformance case names used twice: {duplicates}")
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root.parent, prefix=".cases-") as scratch:
        for case in written:
            write_case(case, Path(scratch) / case.name)
        for old in root.iterdir():
            if old.is_dir():
                shutil.rmtree(old)
        for case in written:
            (Path(scratch) / case.name).rename(root / case.name)
    return [c.name for c in written]


def differences(committed=ROOT):
    """What differs between the committed files and a fresh generation (empty when in sync)."""
    with tempfile.TemporaryDirectory() as tmp:
        generate(tmp)
        return _diff_trees(Path(tmp), Path(committed))


def _diff_trees(fresh, committed):
    """Graphs, feeds and case.json must match byte for byte; expected values within the case's
    tolerance, since the oracle's own float64 libm may round its last bit differently per CPU."""
    problems = []

    def walk(cmp, prefix):
        problems.extend(f"{prefix}{n}: only in the table (not committed)" for n in cmp.left_only)
        problems.extend(f"{prefix}{n}: committed but no longer in the table" for n in cmp.right_only)
        _, mismatch, errors = filecmp.cmpfiles(cmp.left, cmp.right, cmp.common_files, shallow=False)
        mismatch = [n for n in mismatch if not _expected_within_tolerance(Path(cmp.left), Path(cmp.right), n)]
        problems.extend(f"{prefix}{n}: differs" for n in mismatch + errors)
        for name, sub in sorted(cmp.subdirs.items()):
            walk(sub, f"{prefix}{name}/")

    if not committed.is_dir():
        return [f"{committed}: missing"]
    walk(filecmp.dircmp(fresh, committed, ignore=[]), "")
    return sorted(problems)


def _expected_within_tolerance(fresh_dir, committed_dir, file_name):
    if not file_name.startswith("expected_") or not (committed_dir / "case.json").is_file():
        return False
    case = replay.load(committed_dir)
    index = [f"expected_{file_stem(f)}.npy" for f in case.fetches].index(file_name)
    fresh = np.load(fresh_dir / file_name, allow_pickle=False)
    return case.tolerances[index].mismatch(fresh, case.expected[index]) is None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report whether the files are stale")
    args = parser.parse_args(argv)
    if args.check:
        problems = differences()
        for p in problems:
            print(p)
        if problems:
            print(f"conformance files are stale; regenerate with: {REGENERATE}")
        return 1 if problems else 0
    names = generate()
    print(f"wrote {len(names)} conformance cases to tests/conformance/cases/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
