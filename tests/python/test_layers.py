"""The package's layers, read from the tree: a module imports only from its own layer or lower.

    _native     the native runtime's files and the one binding of its C API (graphrun_c.h)
    _proto      code generated from proto/
    framework   graph, dtypes, shapes, errors, the numerics policy, limits: no ops, no files
    ops         the op registry and the op families (definitions, kernels, gradients)
    wire        GraphDef encode/decode, model files, checkpoints, atomic writes
    client      Session, Runner, feeds and the output format
    optimize    graph passes over a GraphDef (constant and batch-norm folding, pruning, CSE)
    (top)       the tf.* namespaces: graphdef/__init__.py, nn, math, train, gradients, ...
    serving     graphrun serve's servers, protocols, batching and model repository
    graphrun    the command line and one module per verb

A function-level import of a higher layer hides a cycle from Python, not from the reader, so
each one left is listed below with its reason, and the total may only shrink.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "graphdef"
LAYERS = ["_native", "_proto", "framework", "ops", "wire", "client", "optimize", "top", "serving", "graphrun"]

# (importing module, imported module): why it cannot be a module-level import
UPWARD_FUNCTION_IMPORTS = {
    ("graphdef.framework.graph", "graphdef.client.session"):
        "Tensor.eval() and Operation.run() are TF1's sugar for the default Session",
    ("graphdef.framework.graph", "graphdef.wire.serialize"):
        "Graph.as_graph_def() is TF1's API; encoding belongs to the wire layer",
    ("graphdef.ops.state", "graphdef.client.session"):
        "Variable.load(value, session) is TF1's sugar for the default Session",
}
# Every function-level import of graphdef left: the four above (graph.py twice each), the
# registry's Const (ops.array imports the registry's names: a real cycle), and graphrun's
# verbs importing what only one verb needs when it runs (start-up time). Op families refer
# to each other through module imports (`array_ops.zeros_like`) instead.
FUNCTION_IMPORT_BUDGET = 9


def layer_of(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "top"


def module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def graphdef_imports(path):
    """(imported module, at module level?) for each import of graphdef in the file."""
    found = []
    tree = ast.parse(path.read_text(), filename=str(path))
    top_level = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from graphdef.client import session` imports graphdef.client.session
            names = [f"{node.module}.{a.name}" if _is_module(node.module, a.name) else node.module
                     for a in node.names]
        else:
            continue
        found += [(name, id(node) in top_level) for name in names if name.split(".")[0] == "graphdef"]
    return found


def _is_module(package, name):
    """Whether `from package import name` names a module or subpackage (else: a name inside `package`)."""
    folder = PACKAGE.parent / package.replace(".", "/")
    return (folder / f"{name}.py").exists() or (folder / name / "__init__.py").exists()


def modules():
    return [p for p in sorted(PACKAGE.rglob("*.py")) if "_proto" not in p.parts]


def test_module_level_imports_never_reach_a_higher_layer():
    wrong = []
    for path in modules():
        here = module_name(path)
        for imported, top in graphdef_imports(path):
            if top and LAYERS.index(layer_of(imported)) > LAYERS.index(layer_of(here)):
                wrong.append(f"{here} ({layer_of(here)}) imports {imported} ({layer_of(imported)})")
    assert not wrong, "imports against the layer order:\n  " + "\n  ".join(sorted(set(wrong)))


def test_upward_imports_inside_functions_are_the_listed_ones():
    found = set()
    for path in modules():
        here = module_name(path)
        for imported, top in graphdef_imports(path):
            if not top and LAYERS.index(layer_of(imported)) > LAYERS.index(layer_of(here)):
                found.add((here, imported))
    unlisted = sorted(found - set(UPWARD_FUNCTION_IMPORTS))
    assert not unlisted, ("upward imports inside functions, not in UPWARD_FUNCTION_IMPORTS with a reason:\n  "
                          + "\n  ".join(f"{a} -> {b}" for a, b in unlisted))
    stale = sorted(set(UPWARD_FUNCTION_IMPORTS) - found)
    assert not stale, f"UPWARD_FUNCTION_IMPORTS lists imports that are gone: {stale}"


def test_function_level_imports_only_shrink():
    count = sum(not top for path in modules() for _, top in graphdef_imports(path))
    assert count <= FUNCTION_IMPORT_BUDGET, (
        f"{count} function-level imports of graphdef, over the budget of {FUNCTION_IMPORT_BUDGET}: import at "
        "module level from a lower layer, or move the code to the layer it needs")


def test_every_module_sits_in_a_known_layer():
    top_level = sorted(p.stem for p in PACKAGE.glob("*.py"))
    packages = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert set(packages) <= set(LAYERS), f"packages outside the layer list: {set(packages) - set(LAYERS)}"
    namespaces = {"__init__", "nn", "math", "losses", "train", "io", "gfile", "summary", "init_ops", "graph_util",
                  "gradients", "saved_model", "image", "strings", "sparse", "linalg", "lookup"}
    assert set(top_level) <= namespaces, (
        f"top-level modules that are not tf.* namespaces: {set(top_level) - namespaces}")
