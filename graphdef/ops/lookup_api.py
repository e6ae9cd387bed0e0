"""The tf.lookup builders: StaticHashTable, StaticVocabularyTable and their initializers, built as TensorFlow builds
them (HashTableV2 + InitializeTableV2 or InitializeTableFromTextFileV2, LookupTableFindV2), so a graph
made here runs in TensorFlow and one TensorFlow made runs here.

Each initializer joins the graph's table initializers, which tables_initializer() groups into one
NoOp, `init_all_tables`; the Session runs that op by itself before a graph's first run
(graphdef.client.table_init), so a frozen graph with tables needs no extra step.
"""

from graphdef.framework import dtypes
from graphdef.framework.graph import get_default_graph
from graphdef.ops import compare, gather_scatter
from graphdef.ops import math as math_ops
from graphdef.ops.array import group
from graphdef.ops.lookup import LINE_NUMBER, WHOLE_LINE
from graphdef.ops.registry import build, convert_to_tensor
from graphdef.ops.strings_hash import to_hash_bucket_fast
from graphdef.ops.strings_print import as_string

__all__ = ["KeyValueTensorInitializer", "StaticHashTable", "StaticVocabularyTable", "TextFileIndex",
           "TextFileInitializer", "tables_initializer"]


class TextFileIndex:
    """Which part of a vocabulary line a key or value is: a column number, or one of these."""

    WHOLE_LINE = WHOLE_LINE
    LINE_NUMBER = LINE_NUMBER


def _initializers(graph):
    found = getattr(graph, "_table_initializers", None)
    if found is None:
        found = graph._table_initializers = []
    return found


class KeyValueTensorInitializer:
    """A table's content given as two tensors of the same shape: keys and values."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        self._keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
        self._values = convert_to_tensor(values, dtype=value_dtype, name="values")
        self._name = name or "key_value_init"
        self.key_dtype, self.value_dtype = self._keys.dtype, self._values.dtype

    def initialize(self, table_handle):
        op = build("InitializeTableV2", [table_handle, self._keys, self._values], name=self._name,
                   default_name="table_init")
        _initializers(op.graph).append(op)
        return op


class TextFileInitializer:
    """A table's content read from a vocabulary file: one entry per line (TextFileIndex for keys/values)."""

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index, vocab_size=None, delimiter="\t",
                 name=None, value_index_offset=0):
        for index, dtype, what in ((key_index, key_dtype, "key"), (value_index, value_dtype, "value")):
            if index == LINE_NUMBER and dtypes.as_dtype(dtype) is not dtypes.int64:
                raise ValueError(f"TextFileInitializer: the line number is int64, but {what}_dtype is "
                                 f"{dtypes.as_dtype(dtype).name}")
            if index == WHOLE_LINE and dtypes.as_dtype(dtype) is not dtypes.string:
                raise ValueError(f"TextFileInitializer: the whole line is a string, but {what}_dtype is "
                                 f"{dtypes.as_dtype(dtype).name}")
        self._filename = filename
        self.key_dtype, self.value_dtype = dtypes.as_dtype(key_dtype), dtypes.as_dtype(value_dtype)
        self._attrs = {"key_index": key_index, "value_index": value_index,
                       "vocab_size": -1 if vocab_size is None else vocab_size, "delimiter": delimiter,
                       "offset": value_index_offset}
        self._name = name or "text_file_init"

    def initialize(self, table_handle):
        with get_default_graph().name_scope(self._name + "/"):
            filename = convert_to_tensor(self._filename, dtype=dtypes.string, name="asset_filepath")
        op = build("InitializeTableFromTextFileV2", [table_handle, filename], name=self._name,
                   default_name="text_file_init", attrs=dict(self._attrs))
        _initializers(op.graph).append(op)
        return op


class StaticHashTable:
    """A read-only table, filled once by its initializer; lookup() gives default_value for unknown keys."""

    def __init__(self, initializer, default_value, name=None):
        self.key_dtype, self.value_dtype = initializer.key_dtype, initializer.value_dtype
        self.resource_handle = build("HashTableV2", [], name=name, default_name="hash_table", attrs={
            "key_dtype": self.key_dtype, "value_dtype": self.value_dtype}).outputs[0]
        self._default_value = convert_to_tensor(default_value, dtype=self.value_dtype, name="Const")
        self._init_op = initializer.initialize(self.resource_handle)
        self.default_value = self._default_value

    @property
    def initializer(self):
        return self._init_op

    def lookup(self, keys, name=None):
        keys = convert_to_tensor(keys, dtype=self.key_dtype, name="keys")
        return build("LookupTableFindV2", [self.resource_handle, keys, self._default_value], name=name,
                     default_name="hash_table_Lookup/LookupTableFindV2").outputs[0]

    def size(self, name=None):
        return build("LookupTableSizeV2", [self.resource_handle], name=name,
                     default_name="hash_table_Size/LookupTableSizeV2").outputs[0]

    def export(self, name=None):
        op = build("LookupTableExportV2", [self.resource_handle], name=name, default_name="LookupTableExportV2",
                   attrs={"Tkeys": self.key_dtype, "Tvalues": self.value_dtype})
        return op.outputs[0], op.outputs[1]

    __getitem__ = lookup


class StaticVocabularyTable:
    """Ids of a vocabulary (int64 values), and for a key outside it vocab_size plus its hash bucket among
    num_oov_buckets, as TensorFlow computes it (StringToHashBucketFast of the key, or of its decimal text)."""

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None):
        if num_oov_buckets <= 0:
            raise ValueError(f"StaticVocabularyTable: num_oov_buckets must be > 0, got {num_oov_buckets}")
        if initializer.value_dtype is not dtypes.int64:
            raise TypeError(f"StaticVocabularyTable: the initializer's values must be int64, got "
                            f"{initializer.value_dtype.name}")
        self._table = StaticHashTable(initializer, -1, name=name)
        self._num_oov_buckets = num_oov_buckets
        self.key_dtype = dtypes.as_dtype(lookup_key_dtype) if lookup_key_dtype else initializer.key_dtype
        self.value_dtype = dtypes.int64
        self.resource_handle = self._table.resource_handle

    @property
    def initializer(self):
        return self._table.initializer

    def size(self, name=None):
        return math_ops.add(self._table.size(), self._num_oov_buckets, name=name)

    def lookup(self, keys, name=None):
        keys = convert_to_tensor(keys, dtype=self.key_dtype, name="keys")
        text = keys if keys.dtype is dtypes.string else as_string(keys)
        buckets = to_hash_bucket_fast(text, self._num_oov_buckets)
        looked_up = keys if keys.dtype is self._table.key_dtype else math_ops.cast(keys, self._table.key_dtype)
        ids = self._table.lookup(looked_up)
        oov_ids = math_ops.add(buckets, self._table.size())
        return gather_scatter.where(compare.not_equal(ids, -1), ids, oov_ids, name=name)

    __getitem__ = lookup


def tables_initializer(name="init_all_tables"):
    """One op running every table initializer of the default graph (a NoOp when there is none)."""
    found = _initializers(get_default_graph())
    if found:
        return group(*found, name=name)
    return build("NoOp", [], name=name)

