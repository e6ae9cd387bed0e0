"""The tf.io parsing builders: parse_example and parse_single_example with FixedLenFeature, FixedLenSequenceFeature,
VarLenFeature and RaggedFeature, built as TensorFlow 2 builds them: one ParseExampleV2 node, keys
sorted, a FixedLenFeature without a default required, a VarLenFeature a tf.SparseTensor."""

from collections import namedtuple

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.shapes import TensorShape
from graphdef.ops import parse_example as _registered  # noqa: F401 - the ops this module builds
from graphdef.ops.array import constant
from graphdef.ops.registry import build, convert_to_tensor
from graphdef.ops.sparse import SparseTensor

__all__ = ["FixedLenFeature", "FixedLenSequenceFeature", "RaggedFeature", "VarLenFeature", "parse_example",
           "parse_single_example"]

FixedLenFeature = namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"], defaults=[None])
FixedLenSequenceFeature = namedtuple("FixedLenSequenceFeature", ["shape", "dtype", "allow_missing",
                                                                 "default_value"], defaults=[False, None])
VarLenFeature = namedtuple("VarLenFeature", ["dtype"])
RaggedFeature = namedtuple("RaggedFeature", ["dtype", "value_key", "partitions", "row_splits_dtype", "validate"],
                           defaults=[None, (), dtypes.int32, False])


class RaggedValues(namedtuple("RaggedValues", ["values", "row_splits"])):
    """A ragged feature's output: the values of every record, and where each record's begin (graphdef has
    no tf.RaggedTensor)."""


def _default(feature, dtype, shape, name):
    if feature.default_value is None and isinstance(feature, FixedLenSequenceFeature):
        # TF's padding value for a sequence feature without a default
        return constant(b"" if dtype is dtypes.string else np.zeros([], dtype=dtype.np), dtype=dtype, name=name)
    if feature.default_value is None:
        return constant(np.zeros([0], dtype=dtype.np) if dtype is not dtypes.string else [], dtype=dtype,
                        name=name)
    value = np.asarray(feature.default_value if dtype is not dtypes.string else
                       dtypes.string_array(feature.default_value))
    if isinstance(feature, FixedLenFeature):  # TF reshapes the default to the feature's shape: same size
        if value.size != int(np.prod(shape, dtype=np.int64)):
            raise ValueError(f"parse_example: the default of feature '{name[:-len('_default')]}' has {value.size} "
                             f"values; its shape {list(shape)} holds {int(np.prod(shape, dtype=np.int64))}")
        value = value.reshape(shape)
    return constant(value.astype(dtype.np) if dtype is not dtypes.string else value, dtype=dtype, name=name)


def _split(features):
    sparse, dense, ragged = [], [], []
    for key in sorted(features):
        feature = features[key]
        if isinstance(feature, VarLenFeature):
            sparse.append((key, dtypes.as_dtype(feature.dtype)))
        elif isinstance(feature, (FixedLenFeature, FixedLenSequenceFeature)):
            dense.append((key, feature))
        elif isinstance(feature, RaggedFeature):
            if feature.partitions:
                raise ValueError(f"parse_example: RaggedFeature '{key}' with partitions is not supported")
            ragged.append((feature.value_key or key, key, dtypes.as_dtype(feature.dtype),
                           dtypes.as_dtype(feature.row_splits_dtype)))
        else:
            raise TypeError(f"parse_example: feature '{key}' is a {type(feature).__name__}; use FixedLenFeature, "
                            "FixedLenSequenceFeature, VarLenFeature or RaggedFeature")
    return sparse, dense, ragged


def parse_example(serialized, features, example_names=None, name=None):
    """{key: Tensor (dense), SparseTensor (VarLenFeature) or RaggedValues} of a vector of serialized
    tf.Example records (a scalar record gives each dense feature without the batch dim)."""
    serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
    sparse, dense, ragged = _split(features)
    defaults, shapes = [], []
    for key, feature in dense:
        dtype = dtypes.as_dtype(feature.dtype)
        shape = list(TensorShape(feature.shape).dims or [])
        if isinstance(feature, FixedLenSequenceFeature):
            shape = [None] + shape
        shapes.append(TensorShape(shape))
        defaults.append(_default(feature, dtype, [d for d in shape if d is not None], f"{key}_default"))
    names = example_names if example_names is not None else []
    inputs = [serialized, constant(names, dtype=dtypes.string, name="names"),
              constant([k for k, _ in sparse], dtype=dtypes.string, name="sparse_keys"),
              constant([k for k, _ in dense], dtype=dtypes.string, name="dense_keys"),
              constant([k[0] for k in ragged], dtype=dtypes.string, name="ragged_keys"), defaults]
    op = build("ParseExampleV2", inputs, name=name, default_name="ParseExampleV2", attrs={
        "num_sparse": len(sparse), "sparse_types": [t for _, t in sparse],
        "Tdense": [dtypes.as_dtype(f.dtype) for _, f in dense], "dense_shapes": shapes,
        "ragged_value_types": [r[2] for r in ragged], "ragged_split_types": [r[3] for r in ragged]})
    out, n, outputs = {}, len(sparse), op.outputs
    for i, (key, _) in enumerate(sparse):
        out[key] = SparseTensor(outputs[i], outputs[n + i], outputs[2 * n + i])
    for i, (key, _) in enumerate(dense):
        out[key] = outputs[3 * n + i]
    base, m = 3 * n + len(dense), len(ragged)
    for i, (_, key, _, _) in enumerate(ragged):
        out[key] = RaggedValues(outputs[base + i], outputs[base + m + i])
    return out


def parse_single_example(serialized, features, example_names=None, name=None):
    """parse_example of one scalar record: dense features without a batch dim, sparse ones 1-D."""
    return parse_example(serialized, features, example_names=example_names, name=name)
