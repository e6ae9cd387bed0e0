"""Python values <-> their GraphDef protos: shapes, ndarrays (TensorProto) and attr values, checked.

Used by serialize (graphs), the checkpoint and SavedModel readers, and the optimizer.
"""

import numpy as np

from graphdef._proto import graph_pb2
from graphdef.framework import dtypes, limits
from graphdef.framework.shapes import TensorShape

def shape_to_proto(shape, proto=None):
    proto = proto if proto is not None else graph_pb2.TensorShapeProto()
    shape = TensorShape(shape)
    if shape.dims is None:
        proto.unknown_rank = True
    else:
        proto.SetInParent()
        for d in shape.dims:
            proto.dim.add().size = -1 if d is None else d
    return proto


def shape_from_proto(proto):
    if proto.unknown_rank:
        return TensorShape(None)
    return TensorShape([None if d.size == -1 else d.size for d in proto.dim])


def ndarray_to_proto(array, proto=None):
    """Writes `tensor_content` (raw little-endian row-major bytes), as TF does for its tensors."""
    proto = proto if proto is not None else graph_pb2.TensorProto()
    array = np.asarray(array)
    dtype = dtypes.as_dtype(array.dtype)
    proto.dtype = dtype.enum
    shape_to_proto(array.shape, proto.tensor_shape)
    if dtype is dtypes.string:  # TF writes strings one per string_val, never as tensor_content
        proto.string_val.extend(dtypes.string_array(array).reshape(-1).tolist())
        return proto
    little = array.astype(array.dtype.newbyteorder("<"), copy=False)
    proto.tensor_content = np.ascontiguousarray(little).tobytes()
    return proto


_TYPED_FIELD = {
    dtypes.float32: "float_val", dtypes.float64: "double_val", dtypes.int32: "int_val",
    dtypes.int16: "int_val", dtypes.int8: "int_val", dtypes.uint8: "int_val", dtypes.uint16: "int_val",
    dtypes.int64: "int64_val", dtypes.uint32: "uint32_val", dtypes.uint64: "uint64_val",
    dtypes.bool_: "bool_val", dtypes.float16: "half_val", dtypes.string: "string_val",
}


def ndarray_from_proto(proto, where="tensor"):
    """Reads tensor_content, or the typed field with TF's rule: the last value repeats, none = zeros."""
    try:
        dtype = dtypes.as_dtype(proto.dtype)
    except TypeError:
        known = proto.dtype in graph_pb2.DataType.values()
        raise ValueError(f"{where}: unsupported tensor dtype "
                         f"{graph_pb2.DataType.Name(proto.dtype) if known else proto.dtype}") from None
    # the file's claims, checked in graphrun-cc's words (runner/graph/tensor_proto.cc) before numpy
    # sees them: it holds at most 64 dims, and a shape is a promise, not data
    if proto.tensor_shape.unknown_rank:
        raise ValueError(f"{where}: the shape has unknown rank; a constant needs a full shape")
    dims = [d.size for d in proto.tensor_shape.dim]
    if len(dims) > limits.MAX_RANK:
        raise ValueError(f"{where}: the shape has {len(dims)} dims, more than the {limits.MAX_RANK} a tensor may have")
    if any(d < 0 for d in dims):
        raise ValueError(f"{where}: shape {limits.describe_dims(dims)} has a negative dim; a constant needs every "
                         "dim's size")
    shape = shape_from_proto(proto.tensor_shape)
    count = shape.num_elements()
    nbytes = limits.check(shape.dims, dtype.np, what="tensor", where=None if where == "tensor" else where)
    if proto.tensor_content and dtype is dtypes.string:
        raise ValueError(f"{where}: a string tensor cannot be given as tensor_content; TensorFlow writes "
                         "its elements in string_val")
    if proto.tensor_content:
        if len(proto.tensor_content) != nbytes:
            raise ValueError(f"{where}: tensor_content holds {len(proto.tensor_content)} bytes but a {dtype.name} "
                             f"tensor of shape {limits.describe_dims(dims)} needs {nbytes}")
        array = np.frombuffer(proto.tensor_content, dtype=dtype.np.newbyteorder("<"))
        return array.astype(dtype.np, copy=False).reshape(shape.dims)
    if dtype not in _TYPED_FIELD:
        raise ValueError(f"{where}: a {dtype.name} tensor cannot be given by value")
    values = getattr(proto, _TYPED_FIELD[dtype])
    if dtype is dtypes.float16:
        # half_val holds each half's bits in an int32: its low 16 bits, as TensorFlow reads them
        typed = np.array(values, dtype=np.int64).astype(np.uint16).view(np.float16)
    elif dtype is dtypes.string:
        typed = np.empty(len(values), dtype=object)
        typed[:] = list(values)
    elif _TYPED_FIELD[dtype] == "int_val" and dtype is not dtypes.int32:
        # int_val carries int8/16 and uint8/16 too: narrowing keeps the low bits, as TensorFlow does
        typed = np.array(values, dtype=np.int64).astype(dtype.np)
    else:
        typed = np.array(values, dtype=dtype.np)
    if typed.size >= count:
        flat = typed[:count]
    elif typed.size <= 1:
        # one value (or none: zeros) splatted over the shape: a read-only view with zero strides, so a
        # file's small claim of a huge constant costs no memory until something really needs its elements
        fill = typed[0] if typed.size else (b"" if dtype is dtypes.string else dtype.np.type(0))
        scalar = np.empty((), dtype.np)
        scalar[()] = fill
        return np.broadcast_to(scalar, shape.dims)
    else:
        rest = np.empty(count - typed.size, dtype.np)
        rest[:] = typed[-1]
        flat = np.concatenate([typed, rest])
    array = flat.reshape(shape.dims)
    array.flags.writeable = False
    return array


# -- attrs --------------------------------------------------------------------------------

def attr_to_proto(kind, value, proto):
    if isinstance(value, graph_pb2.AttrValue):   # kept verbatim from an imported file
        proto.CopyFrom(value)
    elif kind == "type":
        proto.type = value.enum
    elif kind == "int":
        proto.i = int(value)
    elif kind == "float":
        proto.f = float(value)
    elif kind == "bool":
        proto.b = bool(value)
    elif kind == "string":
        proto.s = value.encode() if isinstance(value, str) else bytes(value)
    elif kind == "shape":
        shape_to_proto(value, proto.shape)
    elif kind == "tensor":
        ndarray_to_proto(value, proto.tensor)
    elif kind == "func":  # a NameAttrList read from a file, or a function's name
        if isinstance(value, str):
            proto.func.name = value
        else:
            proto.func.CopyFrom(value)
    elif kind.startswith("list("):
        proto.list.SetInParent()
        inner = kind[5:-1]
        target = proto.list
        for item in value:
            if inner == "int":
                target.i.append(int(item))
            elif inner == "float":
                target.f.append(float(item))
            elif inner == "type":
                target.type.append(item.enum)
            elif inner == "string":
                target.s.append(item.encode() if isinstance(item, str) else bytes(item))
            elif inner == "shape":
                shape_to_proto(item, target.shape.add())
    else:
        raise ValueError(f"cannot write attr kind {kind}")
    return proto


_EXPECTED_FIELD = {"type": "type", "int": "i", "float": "f", "bool": "b", "string": "s", "shape": "shape",
                   "tensor": "tensor", "func": "func"}
# the words the C++ runner uses for the same mistake, so both runners print one line alike
_HELD = {"list": "a list", "s": "a string", "i": "an int", "f": "a float", "b": "a bool", "type": "a type",
         "shape": "a shape", "tensor": "a tensor", "func": "a function", "placeholder": "a function placeholder",
         None: "nothing"}
_KIND = {"type": "a type", "int": "an int", "float": "a float", "bool": "a bool", "string": "a string",
         "shape": "a shape", "tensor": "a tensor", "func": "a function", "list(int)": "a list of ints",
         "list(type)": "a list of types", "list(shape)": "a list of shapes", "list(float)": "a list of floats",
         "list(string)": "a list of strings"}


def attr_from_proto(kind, proto, where):
    field = proto.WhichOneof("value")
    expected = "list" if kind.startswith("list(") else _EXPECTED_FIELD[kind]
    if field != expected:
        raise ValueError(f"{where} should hold {_KIND[kind]} but holds {_HELD.get(field, field)}")
    if kind == "type":
        try:
            return dtypes.as_dtype(proto.type)
        except TypeError:
            raise ValueError(f"{where}: unsupported dtype {proto.type}") from None
    if kind in ("int", "float", "bool"):
        return getattr(proto, _EXPECTED_FIELD[kind])
    if kind == "string":
        try:
            return proto.s.decode("utf-8")
        except UnicodeDecodeError:  # binary, as a serialized ConfigProto: kept as bytes, so it writes back unchanged
            return proto.s
    if kind == "shape":
        return shape_from_proto(proto.shape)
    if kind == "tensor":
        return ndarray_from_proto(proto.tensor, where)
    if kind == "func":
        return proto.func
    inner = kind[5:-1]
    if inner == "type":
        try:
            return tuple(dtypes.as_dtype(t) for t in proto.list.type)
        except TypeError:
            raise ValueError(f"{where}: unsupported dtype in {list(proto.list.type)}") from None
    if inner == "shape":
        return tuple(shape_from_proto(s) for s in proto.list.shape)
    if inner == "string":
        return tuple(s.decode("utf-8", errors="replace") for s in proto.list.s)
    return tuple(getattr(proto.list, {"int": "i", "float": "f"}[inner]))


# -- graphs -------------------------------------------------------------------------------
