"""One native seam: no module of graphdef loads a native library of its own; every way into
the C++ core goes through graphdef/_native/capi.py, the one binding of runner/capi/graphrun_c.h."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "graphdef"
THE_BINDING = PACKAGE / "_native" / "capi.py"
FOREIGN_FUNCTION_MODULES = {"ctypes", "cffi", "_ctypes"}


def native_loads(path):
    """The lines of `path` that import a foreign-function module or name a library loader."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module.split(".")[0]]
        elif isinstance(node, ast.Attribute) and node.attr in ("CDLL", "PyDLL", "LoadLibrary", "dlopen"):
            found.append(node.lineno)
            continue
        else:
            continue
        if FOREIGN_FUNCTION_MODULES.intersection(names):
            found.append(node.lineno)
    return found


def test_only_the_c_api_binding_loads_a_native_library():
    assert THE_BINDING.is_file(), "graphdef/_native/capi.py, the one binding of graphrun_c.h, is missing"
    offenders = {str(p.relative_to(PACKAGE.parent)): lines for p in sorted(PACKAGE.rglob("*.py"))
                 if p != THE_BINDING and "_proto" not in p.parts and (lines := native_loads(p))}
    assert not offenders, f"modules that load native code outside graphdef/_native/capi.py: {offenders}"


def test_the_check_sees_a_ctypes_load(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import ctypes\nlib = ctypes.CDLL(None)\n")
    assert native_loads(module) == [1, 2]
