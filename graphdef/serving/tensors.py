"""Request tensors in, response tensors out, for both protocols, checked against the model's inputs.

Every problem with a request is a BadRequest whose message names the input (or output) and what
was expected; the transports turn it into HTTP 400 or gRPC INVALID_ARGUMENT. Sizes are checked
before anything is allocated: an element count must match the data actually sent, and a shape
claimed without data (a TensorProto's repeated last value) goes through the tensor size limit.
"""

import numpy as np

from graphdef.framework.errors import ResourceExhaustedError
from graphdef.framework.text_escape import escape_controls
from graphdef.wire.values import ndarray_from_proto, ndarray_to_proto

# Open Inference Protocol datatype names <-> numpy
OIP_DTYPES = {
    "BOOL": np.bool_, "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32, "UINT64": np.uint64,
    "INT8": np.int8, "INT16": np.int16, "INT32": np.int32, "INT64": np.int64,
    "FP16": np.float16, "FP32": np.float32, "FP64": np.float64,
}
OIP_NAME = {np.dtype(v): k for k, v in OIP_DTYPES.items()}


class BadRequest(ValueError):
    """The request cannot be served as sent; the message says what to change."""


class NotFound(LookupError):
    """No such model or version."""


class TooLarge(BadRequest):
    """A body or message over --max-body-mb: HTTP 413 / RESOURCE_EXHAUSTED."""


class TooSlow(BadRequest):
    """A client that did not send its request within --client-timeout: HTTP 408 / DEADLINE_EXCEEDED."""


NAME_SHOWN = 120


def shown(text):
    """A name from a request as an error message quotes it: control characters as \\xNN (as every
    graphrun error line writes them), and cut to NAME_SHOWN characters."""
    text = escape_controls(str(text))
    return text if len(text) <= NAME_SHOWN else text[:NAME_SHOWN] + f"... ({len(text)} characters)"


def oip_datatype(dtype):
    return OIP_NAME.get(np.dtype(dtype), "BYTES")


def check_feeds(model, feeds):
    """feeds {name: ndarray} against the model's inputs: known names, dtypes, shapes, nothing missing."""
    for name, value in feeds.items():
        spec = model.input(name)
        if spec is None:
            known = ", ".join(s.name for s in model.inputs) or "none"
            raise BadRequest(f"unknown input '{shown(name)}'; the model's inputs are: {known}")
        if value.dtype != spec.dtype:
            raise BadRequest(f"input '{name}': datatype {oip_datatype(value.dtype)} ({value.dtype.name}) "
                             f"given, the model expects {oip_datatype(spec.dtype)} ({spec.dtype.name})")
        if spec.shape is not None:
            if value.ndim != len(spec.shape) or any(d is not None and d != n for d, n in zip(spec.shape, value.shape)):
                raise BadRequest(f"input '{name}': shape {list(value.shape)} given, "
                                 f"the model expects {spec.describe_shape()}")
    missing = [s.name for s in model.inputs if s.required and s.name not in feeds]
    if missing:
        raise BadRequest(f"missing input{'s' if len(missing) > 1 else ''} {', '.join(repr(m) for m in missing)}: "
                         "every placeholder without a default must be given")


def check_fetches(model, names):
    """The requested outputs (all of the model's when none are named), as request names."""
    if not names:
        return [s.name for s in model.outputs]
    fetches = []
    for name in names:
        spec = model.output(name)
        if spec is None:
            known = ", ".join(s.name for s in model.outputs)
            raise BadRequest(f"unknown output '{shown(name)}'; the model's outputs are: {known}")
        fetches.append(spec.name)
    return fetches


def parse_shape(shape, where):
    if not isinstance(shape, (list, tuple)) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                                                        for d in shape):
        raise BadRequest(f"{where}: shape must be a list of non-negative integers, got {shown(repr(shape))}")
    return [int(d) for d in shape]


def _count(shape):
    count = 1
    for d in shape:
        count *= d
    return count


def _flat(values, where):
    """Nested JSON lists flattened row-major; BadRequest for ragged or non-scalar leaves."""
    out = []
    stack = [values]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, (bool, int, float)):
            out.append(item)
        else:
            raise BadRequest(f"{where}: data holds {type(item).__name__} {str(item)[:40]!r}, expected numbers")
    return out


def array_from_values(values, dtype, shape, where):
    """The ndarray of `dtype` and `shape` from JSON values (flat or nested), or BadRequest."""
    flat = _flat(values, where)
    if len(flat) != _count(shape):
        raise BadRequest(f"{where}: {len(flat)} values given for shape {shape} ({_count(shape)} elements)")
    try:
        if np.dtype(dtype).kind in "iu":
            if any(isinstance(v, float) for v in flat):
                raise BadRequest(f"{where}: an integer tensor ({np.dtype(dtype).name}) got non-integer values")
            info = np.iinfo(dtype)
            if flat and (min(flat) < info.min or max(flat) > info.max):
                raise BadRequest(f"{where}: values out of the range of {np.dtype(dtype).name}")
        elif np.dtype(dtype).kind == "b" and any(not isinstance(v, bool) for v in flat):
            raise BadRequest(f"{where}: a BOOL tensor takes true/false values")
        kind = np.dtype(dtype).kind
        with np.errstate(over="ignore"):
            array = np.array(flat, dtype=dtype).reshape(shape)
        if kind == "f" and not np.isfinite(array).all() and np.isfinite(np.array(flat, np.float64)).any():
            # a finite number past the dtype's range would be served as an infinity
            finite = np.isfinite(np.array(flat, np.float64)).reshape(shape)
            if (finite & ~np.isfinite(array)).any():
                raise BadRequest(f"{where}: values out of the range of {np.dtype(dtype).name}")
        return array
    except (OverflowError, TypeError, ValueError) as e:
        if isinstance(e, BadRequest):
            raise
        raise BadRequest(f"{where}: values do not fit {np.dtype(dtype).name} ({e})") from None


def array_from_bytes(data, dtype, shape, where):
    """The ndarray from raw little-endian row-major bytes, whose length must match exactly."""
    dtype = np.dtype(dtype)
    need = _count(shape) * dtype.itemsize
    if len(data) != need:
        raise BadRequest(f"{where}: {len(data)} bytes of tensor data given, shape {shape} of "
                         f"{oip_datatype(dtype)} needs {need}")
    return np.frombuffer(data, dtype=dtype.newbyteorder("<")).astype(dtype, copy=False).reshape(shape)


def oip_datatype_dtype(datatype, where):
    if not isinstance(datatype, str) or datatype not in OIP_DTYPES:
        hint = " (string tensors are not supported)" if datatype == "BYTES" else ""
        raise BadRequest(f"{where}: unknown datatype {shown(repr(datatype))}{hint}; one of {', '.join(OIP_DTYPES)}")
    return np.dtype(OIP_DTYPES[datatype])


def raw_bytes(array):
    little = array.astype(array.dtype.newbyteorder("<"), copy=False)
    return np.ascontiguousarray(little).tobytes()


# -- TensorFlow Serving ----------------------------------------------------------------------

def tensor_from_proto(proto, where):
    try:
        return np.asarray(ndarray_from_proto(proto, where=where))
    except ResourceExhaustedError as e:
        raise BadRequest(" ".join(str(e).split())) from None
    except ValueError as e:
        raise BadRequest(" ".join(str(e).split())) from None


def tensor_to_proto(array, proto):
    return ndarray_to_proto(array, proto)


def array_from_json_like(values, spec, where):
    """A TF Serving REST value (nested lists or a scalar) as an array of the input's dtype."""
    if isinstance(values, dict):
        raise BadRequest(f"{where}: {{\"b64\": ...}} and other objects are not supported; give numbers")
    shape = _nested_shape(values, where)
    return array_from_values(values, spec.dtype, shape, where)


def _nested_shape(values, where):
    shape = []
    item = values
    while isinstance(item, list):
        shape.append(len(item))
        if not item:
            break
        item = item[0]
    return shape


def json_value(array):
    """A tensor as JSON-ready nested lists (NaN and infinities as JavaScript's literals)."""
    return array.tolist()
