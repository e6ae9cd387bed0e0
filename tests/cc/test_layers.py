"""The C++ runtime's layers (runner/), as tests/python/test_layers.py checks the Python package's.

The rule, from what the code needs (every `#include "dir/..."` of every .h and .cc under runner/):

    core < io < graph < exec < kernels < passes < session < {cli, capi}

A file may include its own layer and any layer to its left, never one to its right. core is
tensors, dtypes, errors and threads; io reads and writes bytes (npy, npz, SSTable, CRC32C, text
formats) and needs only core; graph loads and validates GraphDefs, with the op registry
(graph/kernel.h) that validation checks nodes against; exec plans and runs a graph; kernels are the
ops; the graph passes come after the kernels because they reuse the kernels' helpers (windows, axes,
oneDNN's limits) to decide what they may fuse; session (plans with feeds, fetches and targets,
variables kept between runs, the passes run per plan) is what both clients share. The two clients,
cli (graphrun-cc: options, --feed/--random parsing, verbs, printing) and capi (graphrun_c.h), sit on
top and never include each other. The generated protobuf headers ("graph.pb.h") may be included
anywhere. A directory under runner/ that holds sources but is in no layer is itself a violation.

libgraphrun.so, the C API, is the core and capi alone: no symbol a CLI object defines is in it, and
it exports nothing but graphrun_*.
"""

import re
import subprocess
from pathlib import Path

import pytest

from tests.support import serve_helpers

REPO = Path(__file__).resolve().parents[2]
CORE = ["core", "io", "graph", "exec", "kernels", "passes", "session"]
CLIENTS = ["cli", "capi"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def allowed(layer):
    """The layers a file of `layer` may include."""
    if layer in CLIENTS:
        return set(CORE) | {layer}
    return set(CORE[: CORE.index(layer) + 1])


def violations(runner):
    """Every include under `runner` that breaks the rule, as "file:line: what"."""
    found = []
    for path in sorted(runner.rglob("*")):
        if path.suffix not in (".h", ".cc") or not path.is_file():
            continue
        where = path.relative_to(runner)
        layer = where.parts[0]
        if len(where.parts) < 2 or layer not in CORE + CLIENTS:
            found.append(f"{where}: in no layer (place {where.parts[0]}/ in tests/cc/test_layers.py's order)")
            continue
        text = path.read_text()
        for match in INCLUDE.finditer(text):
            included = match.group(1)
            line = text.count("\n", 0, match.start()) + 1
            if included.endswith(".pb.h") and "/" not in included:
                continue
            target = included.split("/")[0] if "/" in included else None
            if target not in CORE + CLIENTS:
                found.append(f"{where}:{line}: includes \"{included}\", which is in no layer")
            elif target not in allowed(layer):
                found.append(f"{where}:{line}: {layer} includes \"{included}\" ({target} is above {layer})"
                             if target in CORE or layer in CORE else
                             f"{where}:{line}: {layer} includes \"{included}\" (the clients never include each other)")
    return found


def test_the_runner_keeps_its_layers():
    assert violations(REPO / "runner") == []


def test_the_check_sees_each_kind_of_violation(tmp_path):
    runner = tmp_path / "runner"
    files = {
        "core/tensor.h": '#include "core/dtype.h"\n#include "graph.pb.h"\n',
        "exec/prepare.h": '#include "graph/graph.h"\n#include "cli/cli.h"\n',
        "io/feeds.h": '#include "exec/executor.h"\n',
        "passes/fold.cc": '#include "kernels/lib/window.h"\n#include "session/session.h"\n',
        "cli/main.cc": '#include "session/session.h"\n#include "capi/model.h"\n',
        "capi/model.cc": '  #  include "passes/pass.h"\n#include "local.h"\n',
        "extras/thing.cc": "",
    }
    for name, text in files.items():
        (runner / name).parent.mkdir(parents=True, exist_ok=True)
        (runner / name).write_text(text)
    found = violations(runner)
    assert found == [
        'capi/model.cc:2: includes "local.h", which is in no layer',
        'cli/main.cc:2: cli includes "capi/model.h" (the clients never include each other)',
        'exec/prepare.h:2: exec includes "cli/cli.h" (cli is above exec)',
        "extras/thing.cc: in no layer (place extras/ in tests/cc/test_layers.py's order)",
        'io/feeds.h:1: io includes "exec/executor.h" (exec is above io)',
        'passes/fold.cc:2: passes includes "session/session.h" (session is above passes)',
    ]


def defined_symbols(path, *options, kinds=None):
    """Names `nm` lists as defined in `path`; `kinds` keeps only those symbol types (e.g. "TDBR")."""
    out = subprocess.run(["nm", "--defined-only", *options, str(path)], capture_output=True, text=True, check=True)
    return {fields[2] for fields in (line.split() for line in out.stdout.splitlines())
            if len(fields) == 3 and (kinds is None or fields[1] in kinds)}


@pytest.mark.slow
def test_the_library_has_no_cli_code_and_exports_only_the_c_api():
    library = serve_helpers.ensure_library()
    exported = defined_symbols(library, "-D")
    assert exported and all(name.startswith("graphrun_") for name in exported), \
        sorted(n for n in exported if not n.startswith("graphrun_"))
    assert {"graphrun_session_run", "graphrun_model_run"} <= exported
    inside = defined_symbols(library)  # the whole symbol table, local symbols included
    assert any("Session" in name and "graphrun" in name for name in inside), "the library's symbol table is stripped"
    cli_objects = [REPO / "build" / "obj" / p.relative_to(REPO).with_suffix(".o")
                   for p in sorted((REPO / "runner" / "cli").glob("*.cc"))]
    missing = [str(o) for o in cli_objects if not o.is_file()]
    assert not missing, f"`make cc` builds these CLI objects: {missing}"
    # strong definitions only: inline functions and templates (weak) are shared with the core's headers
    from_cli = set().union(*(defined_symbols(o, "-g", kinds="TDBR") for o in cli_objects))
    assert from_cli, "the CLI objects define no global symbols?"
    assert sorted(from_cli & inside) == []
