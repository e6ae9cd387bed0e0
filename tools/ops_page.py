"""Writes docs/ops.md, the table of every op, from the op registry and graphrun-cc's kernel list.

    .venv/bin/python tools/ops_page.py            # rewrite docs/ops.md
    .venv/bin/python tools/ops_page.py --check    # exit 1 if docs/ops.md is stale

The page is derived, never edited: Python's side comes from graphdef.ops.registry (each op's
module, type-attr constraints, numerics class and gradient), the C++ side from
`graphrun-cc --list-kernels --json` (each kernel's declared attrs, internal kernels included).
The output depends on nothing else (no dates, no paths), so a committed page equal to a fresh
one means it is current; tests/docs/test_ops_page.py holds it to that.
"""

import argparse
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from graphdef._native import EXECUTABLE, executable_path, how_to_get
from graphdef.framework import dtypes
from graphdef.ops import REGISTRY, unsupported
from graphdef.ops.registry import NOT_DIFFERENTIABLE

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "ops.md"
REGENERATE = ".venv/bin/python tools/ops_page.py"

# Readable family names for the graphdef/ops/ modules; a module missing here is named after its
# file ("space_batch" -> "space batch"), so a new module still gets a table.
FAMILIES = {
    "batch_norm": "batch normalization",
    "compare": "comparison and logic",
    "control_flow": "control flow",
    "conv": "convolution",
    "functional": "functional control flow",
    "gather_scatter": "gather and scatter",
    "image": "image resizing",
    "linalg": "batched matmul",
    "list_ops": "tensor lists",
    "manip": "joining and splitting",
    "math": "math",
    "math_unary": "unary math",
    "nms": "non-max suppression",
    "nn": "softmax and losses",
    "pool": "pooling",
    "reverse_pad": "reverse and pad",
    "rnn_support": "RNN support",
    "scan_topk": "scans and top-k",
    "space_batch": "space and batch",
    "state": "variables and optimizers",
    "strided_slice": "strided slice",
}
# graphrun-cc's internal kernels: written only by its own graph passes (runner/passes)
CC_PASSES = "C++ graph passes"

# short dtype names, in the order a cell lists them; runs of three or more in one family collapse
ORDER = ("float16", "float32", "float64", "int8", "int16", "int32", "int64",
         "uint8", "uint16", "uint32", "uint64", "bool", "variant")
SHORT = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8", "int16": "i16", "int32": "i32",
         "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "bool",
         "variant": "variant"}


def cc_kernels(runner):
    """{op: (kernel declaration, internal?)} from `graphrun-cc --list-kernels --json`, and the dtypes
    it carries."""
    proc = subprocess.run([str(runner), "--list-kernels", "--json"], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"{runner} --list-kernels --json failed: {proc.stderr.strip()}")
    listing = json.loads(proc.stdout)
    if "internal_kernels" not in listing or "dtypes" not in listing:
        raise RuntimeError(f"{runner} predates the internal kernels in --list-kernels --json; run `make cc`")
    kernels = {k["op"]: (k, False) for k in listing["kernels"]}
    kernels.update({k["op"]: (k, True) for k in listing["internal_kernels"]})
    return kernels, frozenset(listing["dtypes"])


# -- cells --------------------------------------------------------------------------------------

def dtype_set(names):
    """'f16–f64, i8–i64, u8, u16, bool': the names in ORDER, runs of three or more of one family joined."""
    present = [n for n in ORDER if n in names]
    family = [re.sub(r"\d+$", "", n) for n in present]
    parts, i = [], 0
    while i < len(present):
        j = i
        while (j + 1 < len(present) and family[j + 1] == family[i]
               and ORDER.index(present[j + 1]) == ORDER.index(present[j]) + 1):
            j += 1
        if j - i >= 2:
            parts.append(f"{SHORT[present[i]]}–{SHORT[present[j]]}")
        else:
            parts.extend(SHORT[n] for n in present[i:j + 1])
        i = j + 1
    return ", ".join(parts + sorted(n for n in names if n not in SHORT))


def dtypes_cell(type_attrs, fixed, carried):
    """A runtime's dtypes for one op. type_attrs: [(name, kind, allowed names or None for any)];
    fixed: the dtypes of args no attr types; carried: what the runtime has, for "any"."""
    if not type_attrs:
        return f"fixed: {dtype_set(fixed)}" if fixed else "—"
    cells = []
    for name, kind, allowed in type_attrs:
        text = "list of any" if kind == "list(type)" else dtype_set(carried if allowed is None else allowed)
        cells.append(f"{name}: {text}")
    if len(type_attrs) == 1 and type_attrs[0][0] == "T":
        return cells[0].partition(": ")[2]  # TF's usual name for the one data dtype: it adds nothing
    return "<br>".join(cells)


# an open type attr is checked against nothing in the registry, so a TensorList's variant passes too
PYTHON_CARRIED = frozenset(d.name for d in dtypes.ALL + (dtypes.variant,))


def python_dtypes(opdef):
    attrs = [(name, a.kind, None if a.allowed is None else {d.name for d in a.allowed})
             for name, a in opdef.attrs.items() if a.kind in ("type", "list(type)")]
    fixed = {arg.dtype.name for arg in opdef.inputs + opdef.outputs if arg.dtype is not None}
    return dtypes_cell(attrs, fixed, PYTHON_CARRIED)


def cc_dtypes(kernel, carried):
    attrs = [(a["name"], a["kind"], set(a["allowed"]) or None)
             for a in kernel["attrs"] if a["kind"] in ("type", "list(type)")]
    fixed = {arg["dtype"] for arg in kernel["inputs"] + kernel["outputs"] if arg["dtype"]}
    return dtypes_cell(attrs, fixed, carried)


def numerics_cell(numerics):
    if numerics.exact:
        return "exact" if numerics.zero_sign else "exact, ±0"
    return f"{numerics.ulps} ulps" + (" of max" if numerics.per_tensor else "")


def gradient_cell(grad):
    if grad is None:
        return "none (an error)"
    return "not differentiable" if grad is NOT_DIFFERENTIABLE else "yes"


def family_of(opdef):
    module = opdef.module.rpartition(".")[2]
    return FAMILIES.get(module, module.replace("_", " "))


# -- the page -----------------------------------------------------------------------------------

INTRO = """\
# Ops

Every op graphdef knows, one row each, grouped by family: the module of `graphdef/ops/` that
defines it. An op is defined once, in Python (`graphdef.ops.registry.define`: its signature,
shape inference, numpy kernel, numerics class and gradient); graphrun-cc, the C++ runtime,
declares the same signature again for each kernel it has, and a test holds the two declarations
together. This page is generated from both by `{regenerate}`, and a test
fails when the committed page differs from a fresh one, so it is never edited by hand.

## How to read it

**Python dtypes** and **C++ dtypes** are the dtypes each runtime accepts, per type attr of the op
(`Tidx: …`; the name is left out when the op's only type attr is `T`). Short names: `f32` is
float32, `i8` int8, `u16` uint16; `f16–f64` is a run (float16, float32, float64); `variant` is a
TensorList's handle, which only passes between ops. An attr the definition leaves open is
spelled out as every dtype that runtime carries there:

- Python: {py_carried}
- C++: {cc_carried}

Arguments of a fixed dtype are not shown (a comparison's bool result), except as `fixed:` for an
op with no type attr at all; `list of any` is a list(type) attr (one dtype per tensor);
`not in C++` or `not in Python` means that runtime has no such op.

**numerics** is how exactly the result is specified (`graphdef/framework/numerics.py`), which
sets the tolerance the tests and the conformance cases compare runtimes with. Integers and bools
are always compared exactly.

- `exact`: bit for bit, as integer arithmetic, data movement, comparisons and correctly rounded
  `+ - * / sqrt` in a fixed order are.
- `exact, ±0`: bit for bit except the sign of a zero, which IEEE 754 leaves open for max and min
  and the ops that pick with them (Relu, MaxPool).
- `4 ulps`: each element within that many units in the last place of itself, for functions a
  math library computes to a few ulps (exp, log, tanh, pow).
- `8 ulps of max`: within that many ulps of the tensor's largest magnitude, for sums in an order
  of the kernel's choosing (reductions, matmul, convolution).

**gradient** is `yes` when `tf.gradients` can go through the op, `not differentiable` when it
stops there (comparisons, shapes, integer results), and `none (an error)` when the op has no
gradient yet, so `tf.gradients` refuses a graph that needs one.
"""


def rows(runner):
    """{family: [(op, python dtypes, c++ dtypes, numerics, gradient)]}, each family's rows sorted."""
    kernels, cc_carried = cc_kernels(runner)
    families = {}
    for op in sorted(set(REGISTRY) | set(kernels)):
        opdef = REGISTRY.get(op)
        kernel, internal = kernels.get(op, (None, False))
        if opdef is not None:
            family = family_of(opdef)
            py = python_dtypes(opdef)
            numerics, grad = numerics_cell(opdef.numerics), gradient_cell(opdef.grad)
        else:
            family = CC_PASSES if internal else "C++ only"
            py, numerics, grad = "not in Python", "—", "—"
        cc = cc_dtypes(kernel, cc_carried) if kernel is not None else "not in C++"
        families.setdefault(family, []).append((op, py, cc, numerics, grad))
    return families, cc_carried


def family_order(families):
    """Alphabetical, the C++ passes' internal kernels last."""
    return sorted(families, key=lambda family: (family == CC_PASSES, family.lower()))


def summary(families):
    lines = ["## Summary", "",
             "| family | ops | in Python | in C++ | in both |",
             "| --- | ---: | ---: | ---: | ---: |"]
    totals = [0, 0, 0, 0]
    for family in family_order(families):
        table = families[family]
        counts = [len(table),
                  sum(row[1] != "not in Python" for row in table),
                  sum(row[2] != "not in C++" for row in table),
                  sum(row[1] != "not in Python" and row[2] != "not in C++" for row in table)]
        totals = [t + c for t, c in zip(totals, counts)]
        lines.append(f"| {family} | " + " | ".join(map(str, counts)) + " |")
    lines.append("| **all** | " + " | ".join(f"**{t}**" for t in totals) + " |")
    return lines, totals


def family_table(family, table):
    lines = [f"## {family[0].upper() + family[1:]}", ""]
    if family == CC_PASSES:
        lines += ["Kernels graphrun-cc's own graph passes write when they fuse a pattern; a model file",
                  "naming one is refused, and `--list-kernels` leaves them out of its plain listing.", ""]
    lines += ["| op | Python dtypes | C++ dtypes | numerics | gradient |", "| --- | --- | --- | --- | --- |"]
    lines += [f"| `{op}` | {py} | {cc} | {numerics} | {grad} |" for op, py, cc, numerics, grad in table]
    return lines


def recognised_section():
    """The op types unsupported.py names in its refusals without defining them."""
    named = sorted({op for group, _ in unsupported._CONTROL_FLOW for op in group} - set(REGISTRY))
    resources = [resource for _, resource in unsupported._RESOURCES]
    text = ("A model may hold ops graphdef has no definition of: it loads, and a run that needs one is "
            "refused with a line naming it. For these the line also says what they are: TensorFlow "
            "control flow graphdef does not carry (" + ", ".join(f"`{op}`" for op in named) + "), and ops of "
            + ", ".join(resources[:-1]) + " or " + resources[-1] + ", which only TensorFlow's own runtime holds.")
    return ["## Recognised but not run", "", *textwrap.wrap(text, 100, break_long_words=False,
                                                             break_on_hyphens=False)]


def page(runner):
    families, cc_carried = rows(runner)
    counts, totals = summary(families)
    text = INTRO.format(regenerate=REGENERATE, py_carried=dtype_set(PYTHON_CARRIED),
                        cc_carried=dtype_set(cc_carried))
    lines = [text.rstrip("\n"), ""] + counts[:2]
    lines.append(f"graphdef defines {totals[1]} ops in Python and graphrun-cc has kernels for {totals[2]}; "
                 f"{totals[3]} are in both.")
    lines += [""] + counts[2:]
    for family in family_order(families):
        lines += [""] + family_table(family, families[family])
    lines += [""] + recognised_section()
    return "\n".join(lines) + "\n"


# -- staleness ----------------------------------------------------------------------------------

def _table_rows(text):
    """{op: its row} of a page's family tables."""
    return {m.group(1): line for line in text.splitlines() for m in [re.match(r"\| `(\w+)` \|", line)] if m}


def stale(committed, fresh):
    """One line saying how the committed page differs from a fresh one; None when they are equal."""
    if committed == fresh:
        return None
    old, new = _table_rows(committed), _table_rows(fresh)
    ops = sorted(op for op in old.keys() | new.keys() if old.get(op) != new.get(op))
    what = f"the rows of {', '.join(ops)} differ" if ops else "its text outside the op rows differs"
    return f"docs/ops.md is stale ({what}); regenerate it with `{REGENERATE}` and commit it"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/ops.md is stale; write nothing")
    parser.add_argument("--runner", type=Path, default=None, help="graphrun-cc (default: the package's own)")
    args = parser.parse_args(argv)
    runner = args.runner or executable_path()
    if not runner.is_file():
        sys.exit(f"ops_page: {how_to_get(EXECUTABLE)}")
    fresh = page(runner)
    if args.check:
        problem = stale(PAGE.read_text() if PAGE.exists() else "", fresh)
        if problem:
            print(problem)
            return 1
        return 0
    PAGE.write_text(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
