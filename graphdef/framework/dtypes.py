"""The one table of element types: graphdef DType <-> GraphDef enum <-> numpy."""

import numpy as np

from graphdef._proto import graph_pb2


class DType:
    """An element type; one instance per type, so `is` and `==` agree."""

    __slots__ = ("name", "enum", "np", "is_floating", "is_integer", "is_bool", "is_unsigned", "is_string")

    def __init__(self, name, enum, np_type):
        self.name = name
        self.enum = enum
        self.np = np.dtype(np_type)
        kind = self.np.kind
        self.is_floating = kind == "f"
        self.is_integer = kind in "iu"
        self.is_unsigned = kind == "u"
        self.is_bool = kind == "b"
        self.is_string = name == "string"

    @property
    def as_numpy_dtype(self):
        return self.np.type

    @property
    def base_dtype(self):
        return self

    @property
    def min(self):
        self._check_ordered("minimum")
        return np.finfo(self.np).min if self.is_floating else np.iinfo(self.np).min

    @property
    def max(self):
        self._check_ordered("maximum")
        return np.finfo(self.np).max if self.is_floating else np.iinfo(self.np).max

    def _check_ordered(self, what):
        if not (self.is_floating or self.is_integer or self.is_bool):
            raise TypeError(f"cannot find the {what} value of {self!r}")  # TF raises TypeError too

    def __repr__(self):
        return f"tf.{self.name}"

    def __str__(self):
        return self.name

    def __reduce__(self):
        return as_dtype, (self.name,)


DT = graph_pb2.DataType
float16 = half = DType("float16", DT.DT_HALF, np.float16)
float32 = DType("float32", DT.DT_FLOAT, np.float32)
float64 = double = DType("float64", DT.DT_DOUBLE, np.float64)
int8 = DType("int8", DT.DT_INT8, np.int8)
int16 = DType("int16", DT.DT_INT16, np.int16)
int32 = DType("int32", DT.DT_INT32, np.int32)
int64 = DType("int64", DT.DT_INT64, np.int64)
uint8 = DType("uint8", DT.DT_UINT8, np.uint8)
uint16 = DType("uint16", DT.DT_UINT16, np.uint16)
uint32 = DType("uint32", DT.DT_UINT32, np.uint32)
uint64 = DType("uint64", DT.DT_UINT64, np.uint64)
bool_ = DType("bool", DT.DT_BOOL, np.bool_)
# DT_STRING: bytes of any length; held as a numpy object array of `bytes`, as TF's .numpy() returns
string = DType("string", DT.DT_STRING, np.object_)

ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool_, string)
FLOATS = frozenset((float16, float32, float64))
INTEGERS = frozenset((int8, int16, int32, int64, uint8, uint16, uint32, uint64))
NUMERIC = FLOATS | INTEGERS
SIGNED = FLOATS | frozenset((int8, int16, int32, int64))
INDEX = frozenset((int32, int64))

# DT_VARIANT: an opaque value (a TensorList) that only ops pass between them. It is kept out of
# ALL and of the numpy lookup, so no feed, constant or file tensor can be made of it.
variant = DType("variant", DT.DT_VARIANT, np.object_)
# DT_RESOURCE: a handle to state a run holds (a lookup table, a TensorArray); opaque in the same way.
resource = DType("resource", DT.DT_RESOURCE, np.object_)

_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update({"float": float32, "double": float64, "half": float16, "variant": variant, "resource": resource})
_BY_ENUM = {d.enum: d for d in ALL}
_BY_ENUM.update({variant.enum: variant, resource.enum: resource})
_BY_NP = {d.np: d for d in ALL}  # object -> string, as tf.as_dtype(np.object_)


def as_dtype(value):
    """Converts a DType, numpy dtype or type, name ("float32") or GraphDef enum to a DType."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        found = _BY_NAME.get(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        found = _BY_ENUM.get(value % 100)  # reference types (base + 100) name their base
    elif value is bool:
        found = bool_
    elif value is float:
        found = float64
    elif value is int:
        found = int64
    elif value is bytes:
        found = string
    else:
        try:
            np_dtype = np.dtype(value)
        except TypeError:
            found = None
        else:
            # fixed-width bytes ('S') and unicode ('U') arrays are strings too, as in TensorFlow
            found = string if np_dtype.kind in "SU" else _BY_NP.get(np_dtype)
    if found is None:
        raise TypeError(f"unsupported dtype {value!r}; supported: {', '.join(d.name for d in ALL)}")
    return found


def _as_bytes(item):
    if isinstance(item, bytes):  # np.bytes_ too
        return bytes(item)
    if isinstance(item, str):  # np.str_ too
        try:
            return item.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate, as JSON's "\udcff" gives: no UTF-8 for it
            raise TypeError(f"the str {item!r:.40} holds a lone surrogate, which has no UTF-8 form; "
                            "give bytes instead") from None
    raise TypeError(f"a string tensor holds bytes or str, not {type(item).__name__} ({item!r:.40})")


def string_array(value):
    """`value` (str, bytes, nested lists of them, or an 'S', 'U' or object array) as a string
    tensor's in-memory form: an object ndarray of `bytes`, str encoded as UTF-8."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "S":
        # an 'S' array drops each element's trailing NUL bytes, as numpy itself does on reading one
        return value.astype(object)
    if isinstance(value, (bytes, str)):
        grid = np.empty((), dtype=object)
        grid[()] = value
    else:
        try:
            grid = np.array(value, dtype=object)
        except (ValueError, RecursionError) as e:
            raise TypeError(f"not a rectangular array of strings ({str(e).splitlines()[0]})") from None
    flat = grid.reshape(-1)
    out = np.empty(flat.shape, dtype=object)
    for i, item in enumerate(flat.tolist()):
        out[i] = _as_bytes(item)
    return out.reshape(grid.shape)
