"""tf.Example parsing: ParseExampleV2, ParseExample and ParseSingleExample, as TensorFlow parses.

Each serialized record is a tf.Example (proto/example.proto). A dense feature gives one tensor of
serialized.shape + its shape, taking its default where a record lacks it (a feature without a
default is required); a dense shape whose first dim is unknown (FixedLenSequenceFeature) is padded
with the default to the batch's longest. A sparse feature gives indices, values and dense_shape; a
ragged one values and row_splits. Bad records get one line in TensorFlow's words, naming the node
(the runtime adds it), the record and the feature.
"""

import numpy as np

from graphdef._proto import example_pb2
from graphdef.framework import dtypes, limits
from graphdef.framework.errors import InvalidArgumentError
from graphdef.framework.numerics import EXACT
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, define
from graphdef.ops.strings import as_array, strings_like

FEATURE_DTYPES = frozenset((dtypes.float32, dtypes.int64, dtypes.string))
KIND_OF = {dtypes.float32: "float_list", dtypes.int64: "int64_list", dtypes.string: "bytes_list"}
DTYPE_OF_KIND = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}
SHOWN_BYTES = 64  # of a record that does not parse: enough to recognise it, not a 100 MB line


class _Record:
    """Where an error happened, in TensorFlow's words: a batch's record has a name and index."""

    def __init__(self, batched, index, name):
        self.batched, self.index, self.name = batched, index, name

    def key(self, key):
        if self.batched:
            return f"Name: {self.name}, Key: {key}, Index: {self.index}."
        return f"Key: {key}."

    def feature(self, key):
        return f"Name: {self.name}, Feature: {key}" if self.batched else f"Feature: {key}"


def _parse(serialized, record):
    example = example_pb2.Example()
    try:
        example.ParseFromString(serialized)
    except Exception:  # noqa: BLE001 - protobuf's DecodeError, whatever its module
        shown = serialized[:SHOWN_BYTES].decode("utf-8", "backslashreplace").encode("unicode_escape").decode("ascii")
        more = f"... ({len(serialized)} bytes)" if len(serialized) > SHOWN_BYTES else ""
        where = f" (record {record.index})" if record.batched else ""
        raise InvalidArgumentError(f"Could not parse example input{where}, value: '{shown}{more}'") from None
    return example.features.feature


def _values(feature, key, dtype, record, dense=True):
    """A feature's values as a list, refusing one of another kind (TF words it two ways)."""
    kind = feature.WhichOneof("kind")
    if kind is None:
        return []
    if kind != KIND_OF[dtype]:
        if dense:
            raise InvalidArgumentError(f"{record.key(key)}  Data types don't match. Data type: "
                                       f"{DTYPE_OF_KIND[kind]} but expected type: {_tf_name(dtype)}")
        raise InvalidArgumentError(f"{record.key(key)}  Data types don't match. Expected type: {_tf_name(dtype)}, "
                                   f"Actual type: {DTYPE_OF_KIND[kind]}")
    return list(getattr(feature, kind).value)


def _tf_name(dtype):
    return "float" if dtype is dtypes.float32 else dtype.name


def _array(values, dtype, shape):
    if dtype is dtypes.string:
        return strings_like(shape, values)
    return np.array(values, dtype=dtype.np).reshape(shape)


def _dense(records, key, dtype, shape, default, batch_shape):
    """One dense feature of every record: batch_shape + shape (a first dim of None padded)."""
    default = as_array(default)
    rows = []
    row_size = int(np.prod(shape[1:], dtype=np.int64)) if shape and shape[0] is None else None
    size = None if row_size is not None else int(np.prod(shape, dtype=np.int64))
    for record, features in records:
        feature = features.get(key)
        values = _values(feature, key, dtype, record) if feature is not None else None
        if values is None:
            if default.size == 0 and row_size is None:
                raise InvalidArgumentError(f"{record.feature(key)} (data type: {_tf_name(dtype)}) is required but "
                                           "could not be found.")
            rows.append(None)
            continue
        if row_size is None and len(values) != size:
            raise InvalidArgumentError(f"{record.key(key)}  Number of {_tf_name(dtype)} values != expected.  "
                                       f"Values size: {len(values)} but output shape: {show(shape)}")
        if row_size is not None and (len(values) % max(row_size, 1) or (row_size == 0 and values)):
            raise InvalidArgumentError(f"{record.key(key)}  Number of {_tf_name(dtype)} values is not a multiple "
                                       f"of stride length. Saw {len(values)} values but output shape is: "
                                       f"{show([None] + list(shape[1:]))}")
        rows.append(values)
    if row_size is None:
        filled = [list(default.reshape(-1).tolist()) if r is None else r for r in rows]
        return _array([v for r in filled for v in r], dtype, tuple(batch_shape) + tuple(shape))
    longest = max([len(r) // max(row_size, 1) for r in rows if r is not None], default=0)
    _check_size(len(rows) * longest * max(row_size, 1), dtype)
    pad = default.reshape(-1).tolist()[0] if default.size else (b"" if dtype is dtypes.string else 0)
    flat = []
    for r in rows:
        r = r or []
        flat.extend(r + [pad] * (longest * row_size - len(r)))
    return _array(flat, dtype, tuple(batch_shape) + (longest,) + tuple(shape[1:]))


def _check_default(i, dims, default):
    """A default must fill its feature's shape, or be the one padding value of a sequence feature."""
    if dims and dims[0] is None:
        if default.size != 1:
            raise InvalidArgumentError(f"dense_shape[{i}] is a variable length shape: {show(dims)}, therefore "
                                       f"def_value[{i}] must contain a single element (the padding element).  "
                                       f"But its shape is: {show(default.shape)}")
    elif default.size and not TensorShape(dims).is_compatible_with(TensorShape(list(default.shape))):
        raise InvalidArgumentError(f"def_value[{i}].shape() == {show(default.shape)} is not compatible with "
                                   f"dense_shapes_[{i}] == {show(dims)}")


def _check_size(count, dtype):
    """A hostile dense shape ([10**12]) or batch is refused before its tensor is made."""
    limits.check((count,), dtype.np, what="parsed feature")


def _sparse(records, key, dtype, batched):
    indices, values, longest = [], [], 0
    for record, features in records:
        feature = features.get(key)
        found = _values(feature, key, dtype, record, dense=False) if feature is not None else []
        longest = max(longest, len(found))
        for j in range(len(found)):
            indices.append((record.index, j) if batched else (j,))
        values.extend(found)
    width = 2 if batched else 1
    dense_shape = [len(records), longest] if batched else [longest]
    return (np.array(indices, dtype=np.int64).reshape(len(indices), width), _array(values, dtype, (len(values),)),
            np.array(dense_shape, dtype=np.int64))


def _ragged(records, key, dtype, split_dtype):
    values, splits = [], [0]
    for record, features in records:
        feature = features.get(key)
        values.extend(_values(feature, key, dtype, record, dense=False) if feature is not None else [])
        splits.append(len(values))
    return _array(values, dtype, (len(values),)), np.array(splits, dtype=split_dtype.np)


def _records(serialized, names):
    serialized = as_array(serialized)
    if serialized.ndim > 1:
        raise InvalidArgumentError(f"Expected serialized to be a scalar or vector, got shape {show(serialized.shape)}")
    batched = serialized.ndim == 1
    flat = serialized.reshape(-1).tolist()
    names = as_array(names).reshape(-1).tolist() if names is not None else []
    if names and len(names) != len(flat):
        raise InvalidArgumentError(f"Expected len(names) == len(serialized), got {len(names)} names for "
                                   f"{len(flat)} records")
    out = []
    for i, data in enumerate(flat):
        shown = names[i].decode("utf-8", "backslashreplace") if names and names[i] else "<unknown>"
        record = _Record(batched, i, shown)
        out.append((record, _parse(data, record)))
    return out, serialized.shape


def _keys(tensor, what):
    keys = as_array(tensor)
    if keys.ndim > 1:
        raise InvalidArgumentError(f"Expected {what} to be a vector, got shape {show(keys.shape)}")
    return [k.decode("utf-8", "surrogateescape") for k in keys.reshape(-1).tolist()]


def parse(serialized, names, sparse_keys, dense_keys, ragged_keys, dense_defaults, sparse_types, dense_types,
          dense_shapes, ragged_value_types=(), ragged_split_types=()):
    """The outputs of ParseExampleV2, in its order."""
    for what, keys, kinds in (("sparse_keys", sparse_keys, sparse_types), ("dense_keys", dense_keys, dense_types),
                              ("ragged_keys", ragged_keys, ragged_value_types)):
        if len(keys) != len(kinds):
            raise InvalidArgumentError(f"Expected len({what}) == {len(kinds)} (the types listed), got {len(keys)}")
    records, batch_shape = _records(serialized, names)
    batched = len(batch_shape) == 1
    sparse = [_sparse(records, k, t, batched) for k, t in zip(sparse_keys, sparse_types)]
    dense = []
    for i, (key, dtype, shape, default) in enumerate(zip(dense_keys, dense_types, dense_shapes, dense_defaults)):
        dims = [None if d is None or d < 0 else d for d in (TensorShape(shape).dims or [])]
        _check_default(i, dims, as_array(default))
        if None not in dims:
            _check_size(int(np.prod(batch_shape, dtype=np.int64)) * int(np.prod(dims, dtype=np.int64)), dtype)
        dense.append(_dense(records, key, dtype, dims, default, batch_shape))
    ragged = [_ragged(records, k, t, s) for k, t, s in zip(ragged_keys, ragged_value_types, ragged_split_types)]
    return ([s[0] for s in sparse] + [s[1] for s in sparse] + [s[2] for s in sparse] + dense
            + [r[0] for r in ragged] + [r[1] for r in ragged])


def _named(kernel):
    """The kernel's errors name its node, as the runtime does for errors that are not OpErrors."""
    def run(*args, node, **attrs):
        try:
            return kernel(*args, **attrs)
        except InvalidArgumentError as e:
            raise InvalidArgumentError(f"node '{node}' ({kernel.op_type}): {e}") from None
    run.__signature__ = _signature_with_node(kernel)
    return run


def _signature_with_node(kernel):
    import inspect
    signature = inspect.signature(kernel)
    node = inspect.Parameter("node", inspect.Parameter.KEYWORD_ONLY)
    return signature.replace(parameters=[*signature.parameters.values(), node])


def _parse_example_v2(serialized, names, sparse_keys, dense_keys, ragged_keys, *dense_defaults, num_sparse,
                      sparse_types, Tdense, dense_shapes, ragged_value_types, ragged_split_types):
    out = parse(serialized, names, _keys(sparse_keys, "sparse_keys"), _keys(dense_keys, "dense_keys"),
                _keys(ragged_keys, "ragged_keys"), dense_defaults, sparse_types, Tdense, dense_shapes,
                ragged_value_types, ragged_split_types)
    return tuple(out)


def _dense_output_shapes(ctx, batch, shapes):
    out = []
    for shape in shapes:
        dims = TensorShape(shape).dims
        out.append(TensorShape(None) if batch is None or dims is None
                   else TensorShape(list(batch) + [None if d is None or d < 0 else d for d in dims]))
    return out


def _infer_outputs(ctx, serialized_index, num_sparse, ragged=True):
    serialized = ctx.shape(serialized_index)
    if serialized.ndims is not None and serialized.ndims > 1:
        raise ctx.error(f"serialized must be a scalar or vector, got shape {show(serialized)}")
    batch = None if serialized.ndims is None else serialized.dims
    if len(ctx.attrs["sparse_types"]) != num_sparse:
        raise ctx.error(f"attr 'sparse_types' lists {len(ctx.attrs['sparse_types'])} types for {num_sparse} "
                        "sparse features")
    if len(ctx.attrs["dense_shapes"]) != len(ctx.attrs["Tdense"]):
        raise ctx.error(f"attr 'dense_shapes' lists {len(ctx.attrs['dense_shapes'])} shapes for "
                        f"{len(ctx.attrs['Tdense'])} dense features")
    for dtype in list(ctx.attrs["sparse_types"]) + list(ctx.attrs["Tdense"]):
        if dtype not in FEATURE_DTYPES:
            raise ctx.error(f"a feature is float32, int64 or string, not {dtype.name}")
    width = None if batch is None else len(batch) + 1
    shapes = [TensorShape([None, width])] * num_sparse + [TensorShape([None])] * num_sparse
    shapes += [TensorShape([width])] * num_sparse
    shapes += _dense_output_shapes(ctx, batch, ctx.attrs["dense_shapes"])
    if ragged:
        n = len(ctx.attrs["ragged_value_types"])
        if len(ctx.attrs["ragged_split_types"]) != n:
            raise ctx.error("attrs 'ragged_value_types' and 'ragged_split_types' must list as many types")
        shapes += [TensorShape([None])] * (2 * n)
    return shapes


_parse_example_v2.op_type = "ParseExampleV2"
PARSE_EXAMPLE_V2 = define(
    "ParseExampleV2",
    "serialized: string, names: string, sparse_keys: string, dense_keys: string, ragged_keys: string, "
    "dense_defaults: Tdense -> sparse_indices: num_sparse*int64, sparse_values: sparse_types, "
    "sparse_shapes: num_sparse*int64, dense_values: Tdense, ragged_values: ragged_value_types, "
    "ragged_row_splits: ragged_split_types",
    doc="Parses serialized tf.Example records into dense, sparse and ragged tensors, one per feature key.",
    attrs={"Tdense": Attr("list(type)", minimum=0), "num_sparse": Attr("int", minimum=0),
           "sparse_types": Attr("list(type)", minimum=0), "ragged_value_types": Attr("list(type)", minimum=0),
           "ragged_split_types": Attr("list(type)", minimum=0), "dense_shapes": Attr("list(shape)")},
    infer=lambda ctx: _infer_outputs(ctx, 0, ctx.attrs["num_sparse"]), kernel=_named(_parse_example_v2),
    grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _parse_example_v1(serialized, names, *keys_and_defaults, Nsparse, Ndense, sparse_types, Tdense, dense_shapes):
    sparse_keys = [as_array(k)[()].decode("utf-8", "surrogateescape") for k in keys_and_defaults[:Nsparse]]
    dense_keys = [as_array(k)[()].decode("utf-8", "surrogateescape")
                  for k in keys_and_defaults[Nsparse:Nsparse + Ndense]]
    defaults = keys_and_defaults[Nsparse + Ndense:]
    return tuple(parse(serialized, names, sparse_keys, dense_keys, [], defaults, sparse_types, Tdense, dense_shapes))


def _infer_v1(ctx):
    if ctx.shape(0).ndims not in (None, 1):
        raise ctx.error(f"serialized must be a vector, got shape {show(ctx.shape(0))}")
    return _infer_outputs(ctx, 0, ctx.attrs["Nsparse"], ragged=False)


_parse_example_v1.op_type = "ParseExample"
PARSE_EXAMPLE = define(
    "ParseExample",
    "serialized: string, names: string, sparse_keys: Nsparse*string, dense_keys: Ndense*string, "
    "dense_defaults: Tdense -> sparse_indices: Nsparse*int64, sparse_values: sparse_types, "
    "sparse_shapes: Nsparse*int64, dense_values: Tdense",
    doc="TF1's ParseExample: a batch of tf.Example records into dense and sparse tensors (keys as scalars).",
    attrs={"Nsparse": Attr("int", minimum=0), "Ndense": Attr("int", minimum=0),
           "sparse_types": Attr("list(type)", minimum=0), "Tdense": Attr("list(type)", minimum=0),
           "dense_shapes": Attr("list(shape)")},
    infer=_infer_v1, kernel=_named(_parse_example_v1), grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _parse_single_example(serialized, *dense_defaults, num_sparse, sparse_keys, dense_keys, sparse_types, Tdense,
                          dense_shapes):
    if as_array(serialized).ndim:
        raise InvalidArgumentError(f"Expected serialized to be a scalar, got shape {show(as_array(serialized).shape)}")
    return tuple(parse(serialized, None, list(sparse_keys), list(dense_keys), [], dense_defaults, sparse_types,
                       Tdense, dense_shapes))


def _infer_single(ctx):
    if ctx.shape(0).ndims not in (None, 0):
        raise ctx.error(f"serialized must be a scalar, got shape {show(ctx.shape(0))}")
    for what, keys, types in (("sparse_keys", "sparse_keys", "sparse_types"), ("dense_keys", "dense_keys", "Tdense")):
        if len(ctx.attrs[keys]) != len(ctx.attrs[types]):
            raise ctx.error(f"attr '{what}' lists {len(ctx.attrs[keys])} keys for {len(ctx.attrs[types])} types")
    return _infer_outputs(ctx, 0, ctx.attrs["num_sparse"], ragged=False)


_parse_single_example.op_type = "ParseSingleExample"
PARSE_SINGLE_EXAMPLE = define(
    "ParseSingleExample",
    "serialized: string, dense_defaults: Tdense -> sparse_indices: num_sparse*int64, sparse_values: sparse_types, "
    "sparse_shapes: num_sparse*int64, dense_values: Tdense",
    doc="Parses one serialized tf.Example (keys as attrs) into dense and sparse tensors.",
    attrs={"num_sparse": Attr("int", minimum=0), "sparse_keys": Attr("list(string)"),
           "dense_keys": Attr("list(string)"), "sparse_types": Attr("list(type)", minimum=0),
           "Tdense": Attr("list(type)", minimum=0), "dense_shapes": Attr("list(shape)")},
    infer=_infer_single, kernel=_named(_parse_single_example), grad=NOT_DIFFERENTIABLE, numerics=EXACT)
