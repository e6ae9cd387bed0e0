"""The control-flow and TensorList op definitions against TensorFlow's own op registry."""

import pytest

from graphdef.framework import dtypes
from graphdef.ops.registry import REGISTRY, REQUIRED

from tests.support.op_oracle import tf_oracle  # noqa: F401  (a fixture: it pins TF's kernels before importing it)

pytestmark = pytest.mark.tf_oracle

OPS = ["Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond", "ControlTrigger",
       "TensorListReserve", "TensorListFromTensor", "TensorListGetItem", "TensorListSetItem",
       "TensorListStack", "TensorListLength", "TensorListElementShape", "EmptyTensorList", "TensorListPushBack",
       "TensorListPopBack", "Any", "All", "ReverseV2"]


def _tf_arg(arg):
    fixed = dtypes.as_dtype(arg.type).name if arg.type else None
    return (arg.name, arg.type_attr or None, fixed, arg.number_attr or None, arg.is_ref)


def _our_arg(arg):
    return (arg.name, arg.type_attr, arg.dtype.name if arg.dtype else None, arg.number_attr, arg.is_ref)


def _tf_default(attr):
    if not attr.HasField("default_value"):
        return REQUIRED
    v = attr.default_value
    field = v.WhichOneof("value")
    if field == "type":
        return dtypes.as_dtype(v.type)
    if field == "s":
        return v.s.decode()
    return getattr(v, field)


@pytest.mark.parametrize("op_type", OPS)
def test_signature_is_tensorflows(tf_oracle, op_type):
    from tensorflow.python.framework import op_def_registry
    ours, theirs = REGISTRY[op_type], op_def_registry.get(op_type)
    assert [_our_arg(a) for a in ours.inputs] == [_tf_arg(a) for a in theirs.input_arg]
    assert [_our_arg(a)[1:] for a in ours.outputs] == [_tf_arg(a)[1:] for a in theirs.output_arg]
    assert set(ours.attrs) == {a.name for a in theirs.attr}
    for attr in theirs.attr:
        mine = ours.attrs[attr.name]
        assert mine.kind == attr.type, attr.name
        assert mine.default == _tf_default(attr), attr.name
        if attr.HasField("allowed_values") and mine.allowed is not None:
            assert {d.name for d in mine.allowed} == {dtypes.as_dtype(t).name
                                                      for t in attr.allowed_values.list.type}
