"""One op schema for both runtimes: graphrun-cc's kernel declarations against the Python registry.

The Python definition (graphdef/ops) is the single source of an op's signature; each C++
kernel repeats it once in its REGISTER_KERNEL expression, and `graphrun-cc --list-kernels
--json` prints those declarations so they can be held against the registry here: the same
inputs in order (name, dtype attr or fixed dtype, list length attr, ref-ness), the same
outputs, the same attrs with the same kinds and defaults. Allowed dtypes may be narrower
in C++ (it lacks kernels for some dtypes) but never wider.
"""

import json
import math

import pytest

from graphdef.ops.cc_pending import cc_pending
from graphdef.ops.registry import REGISTRY, REQUIRED
from tests.support.cc_helpers import ok

# attrs a kernel may leave undeclared: TF metadata no runtime reads
IGNORED_ATTRS = {"_class", "_output_shapes"}


@pytest.fixture(scope="module")
def cc_schemas(cc_runner):
    return {k["op"]: k for k in json.loads(ok(cc_runner, "--list-kernels", "--json"))["kernels"]}


def _python_input(arg):
    return {"name": arg.name, "type_attr": None if arg.dtype else arg.type_attr,
            "dtype": arg.dtype.name if arg.dtype else None, "number_attr": arg.number_attr,
            "is_ref": arg.is_ref, "type_list": arg.type_list}


def _python_output(arg):
    return {"type_attr": None if arg.dtype else arg.type_attr, "dtype": arg.dtype.name if arg.dtype else None,
            "number_attr": arg.number_attr, "type_list": arg.type_list}


def _python_default(attr):
    value = attr.default
    if attr.kind == "type":
        return value.name
    if attr.kind in ("list(int)",):
        return [int(v) for v in value]
    if attr.kind == "string":
        return value.decode() if isinstance(value, bytes) else value
    if attr.kind in ("shape", "tensor", "list(type)", "list(shape)", "list(float)", "list(string)"):
        return None
    return value


def differences(opdef, cc):
    found = []
    cc_inputs = [{k: v for k, v in i.items()} for i in cc["inputs"]]
    if [_python_input(a) for a in opdef.inputs] != cc_inputs:
        found.append(f"inputs: Python {[_python_input(a) for a in opdef.inputs]}, C++ {cc_inputs}")
    if [_python_output(a) for a in opdef.outputs] != cc["outputs"]:
        found.append(f"outputs: Python {[_python_output(a) for a in opdef.outputs]}, C++ {cc['outputs']}")
    cc_attrs = {a["name"]: a for a in cc["attrs"]}
    py_attrs = {name: a for name, a in opdef.attrs.items() if name not in IGNORED_ATTRS}
    if set(py_attrs) != set(cc_attrs):
        found.append(f"attrs: only in Python {sorted(set(py_attrs) - set(cc_attrs))}, "
                     f"only in C++ {sorted(set(cc_attrs) - set(py_attrs))}")
    for name in sorted(set(py_attrs) & set(cc_attrs)):
        py, c = py_attrs[name], cc_attrs[name]
        if py.kind != c["kind"]:
            found.append(f"attr {name}: kind {py.kind} in Python, {c['kind']} in C++")
            continue
        if (py.default is not REQUIRED) != c["has_default"]:
            found.append(f"attr {name}: {'a' if c['has_default'] else 'no'} default in C++, "
                         f"{'no' if py.default is REQUIRED else 'a'} default in Python")
        elif c["has_default"] and c["default"] is not None:
            want = _python_default(py)
            same = math.isclose(want, c["default"], rel_tol=1e-7) if py.kind == "float" else want == c["default"]
            if not same:
                found.append(f"attr {name}: default {want!r} in Python, {c['default']!r} in C++")
        if py.kind == "type" and c["allowed"] and py.allowed is not None:
            wider = set(c["allowed"]) - {d.name for d in py.allowed}
            if wider:
                found.append(f"attr {name}: C++ allows {sorted(wider)}, which Python refuses")
    return found


@pytest.mark.parametrize("op_type", sorted(set(REGISTRY) - cc_pending()))
def test_the_cc_kernel_declares_what_the_registry_defines(op_type, cc_schemas):
    assert op_type in cc_schemas, f"no C++ kernel for {op_type}"
    found = differences(REGISTRY[op_type], cc_schemas[op_type])
    assert not found, f"{op_type}: " + "; ".join(found)


def test_a_pending_op_has_no_cc_kernel_yet(cc_schemas):
    """graphdef.ops.cc_pending lists exactly the ops graphrun-cc lacks: a kernel that lands leaves it."""
    assert sorted(cc_pending() & set(cc_schemas)) == []


def test_no_cc_kernel_lacks_a_python_definition(cc_schemas):
    assert sorted(set(cc_schemas) - set(REGISTRY)) == []
