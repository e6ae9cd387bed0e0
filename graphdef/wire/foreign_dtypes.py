"""Dtypes a file may name that graphdef cannot carry (string, resource, quantized...): a node holding
one is kept as it is and refused only by a run that needs it (graphdef.ops.unsupported)."""

from graphdef._proto import graph_pb2
from graphdef.framework import dtypes


def _carried(enum):
    try:
        dtypes.as_dtype(enum)
    except TypeError:
        return False
    return True


# looked up once: DataType.values() builds a list on every call
_DEFINED_ENUMS = frozenset(graph_pb2.DataType.values())
CARRIED_ENUMS = frozenset(e for e in _DEFINED_ENUMS if _carried(e))


def foreign_dtype(node):
    """The name of a dtype graphdef cannot carry that an attr of `node` holds, else None."""
    attrs = node.attr.items()
    if not any(_foreign_enums(value) for _, value in attrs):
        return None
    for _, value in sorted(attrs):  # in name order, as graphrun-cc: the same answer every run
        foreign = _foreign_enums(value)
        if foreign:
            return graph_pb2.DataType.Name(foreign[0]).removeprefix("DT_").removesuffix("_REF").lower()
    return None


def _foreign_enums(value):
    """The dtype enums in one AttrValue that graphdef cannot carry, in order."""
    kind = value.WhichOneof("value")
    if kind == "type":
        enums = [value.type]
    elif kind == "list":
        enums = list(value.list.type)
    elif kind == "tensor":
        enums = [value.tensor.dtype]
    else:
        return ()
    # DT_INVALID or a number TensorFlow never defined is a malformed node, checked as one
    return [e for e in enums if e not in CARRIED_ENUMS and e != 0 and e in _DEFINED_ENUMS]
