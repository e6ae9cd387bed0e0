"""The CNN and array ops' declarations against TensorFlow's own OpDefs: argument names in order,
attr names, kinds and default presence, and no dtype TF's kernels would refuse."""

import pytest

from graphdef.framework import dtypes
from graphdef.ops import REGISTRY, activations, batch_norm, conv, manip, pool, slicing, strided_slice
from graphdef.ops import gather_scatter, math_unary, reverse_pad, scan_topk
from graphdef.ops.registry import REQUIRED
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture

MODULES = (activations, batch_norm, conv, manip, pool, slicing, strided_slice, gather_scatter, math_unary, reverse_pad,
           scan_topk)
OPS = sorted({d.type for m in MODULES for d in vars(m).values() if getattr(d, "type", None) in REGISTRY
              and REGISTRY[d.type] is d} | {"Rsqrt", "FloorDiv", "FloorMod", "Div"})


def _ours(enum):
    try:
        return dtypes.as_dtype(enum)
    except TypeError:  # bfloat16, complex and quantized types graphdef does not carry
        return None


def _default(attr):
    value = attr.default
    if attr.kind == "type":
        return value.enum
    if attr.kind == "float":
        return pytest.approx(value, rel=1e-7)  # TF stores float32
    return list(value) if attr.kind.startswith("list(") else value


def _tf_default(value):
    field = value.WhichOneof("value")
    if field == "list":
        return list(value.list.i)
    return value.s.decode() if field == "s" else getattr(value, field)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("op_type", OPS)
def test_declaration_matches_tensorflow(tf_oracle, op_type):
    from tensorflow.python.framework import op_def_registry
    theirs = op_def_registry.get(op_type)
    ours = REGISTRY[op_type]
    assert [a.name for a in ours.inputs] == [a.name for a in theirs.input_arg]
    assert [a.name for a in ours.outputs] == [a.name for a in theirs.output_arg]
    attrs = {a.name: a for a in theirs.attr}
    assert set(ours.attrs) == set(attrs)
    for name, attr in ours.attrs.items():
        tf_attr = attrs[name]
        assert attr.kind == tf_attr.type, name
        assert (attr.default is not REQUIRED) == tf_attr.HasField("default_value"), name
        if attr.default is not REQUIRED:
            assert _default(attr) == _tf_default(tf_attr.default_value), name
        if attr.kind == "type" and tf_attr.allowed_values.list.type:
            allowed = {_ours(t) for t in tf_attr.allowed_values.list.type} - {None}
            extra = set(attr.allowed or dtypes.ALL) - allowed
            assert not extra, f"{op_type}.{name} accepts {sorted(d.name for d in extra)}, which TF refuses"


def test_the_list_covers_the_new_ops():
    assert len(OPS) >= 33 and {"Conv2D", "StridedSlice", "IdentityN", "FusedBatchNormV3"} <= set(OPS)
