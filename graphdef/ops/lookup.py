"""Lookup tables: HashTableV2 and the ops that fill, read and export it, as TensorFlow runs them.

A table is a resource the Session holds, made by its HashTableV2 node on first run and kept until
the Session closes. Tables live in the Session's state under one key, keyed by container and
shared_name (the node's name when shared_name is empty), so two nodes sharing a name share a
table, as in TF. The handle a HashTableV2 node outputs is a 0-d object array holding that key.
"""

import os

import numpy as np

from graphdef.framework import dtypes, limits
from graphdef.framework.errors import (FailedPreconditionError, InvalidArgumentError, NotFoundError,
                                       ResourceExhaustedError)
from graphdef.framework.numerics import EXACT
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, define, scalar_shape
from graphdef.ops.strings import as_array, strings_like


TABLES = "\0lookup tables"  # the state key of a session's tables: no node can have this name
KEY_DTYPES = frozenset((dtypes.string, dtypes.int32, dtypes.int64))
VALUE_DTYPES = frozenset((dtypes.string, dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64,
                          dtypes.bool_))
LINE_NUMBER, WHOLE_LINE = -1, -2  # TextFileIndex
TABLE_OPS = frozenset(("HashTableV2", "MutableHashTableV2"))
# the NoOp a TF1 graph keeps its tables' initializers under, which the loaders run before the first run
INIT_OP = "init_all_tables"
_C_NAMES = {"float32": "float", "float64": "double"}  # TF's names of them in its messages
_FIND_ATTRS = {"Tin": Attr("type", allowed=KEY_DTYPES), "Tout": Attr("type", allowed=VALUE_DTYPES)}


class Table:
    """One hash table: a dict from key (bytes or int) to a numpy scalar of value_dtype."""

    def __init__(self, name, key_dtype, value_dtype, mutable):
        self.name, self.key_dtype, self.value_dtype, self.mutable = name, key_dtype, value_dtype, mutable
        self.entries = {}
        self.initialized = mutable  # a MutableHashTable is usable empty

    def check_dtypes(self, node, op_type, have, expected):
        if have != expected:
            raise InvalidArgumentError(
                f"node '{node}' ({op_type}): signature mismatch, have: {', '.join(have)} expected: "
                f"{', '.join(expected)}; table '{self.name}' maps {self.key_dtype.name} to {self.value_dtype.name}")

    def check_ready(self, node, op_type):
        if not self.initialized:
            raise FailedPreconditionError(
                f"node '{node}' ({op_type}): Table not initialized. (table '{self.name}'; run its initializer, "
                "tf.compat.v1.tables_initializer(), first)")

    def insert(self, keys, values, node, op_type, replace):
        """Adds keys -> values; a key already there with another value is TF's FailedPrecondition
        unless `replace` (a MutableHashTable's insert)."""
        entries = self.entries
        for key, value in zip(keys, values):
            old = entries.get(key)
            if old is not None and not replace and old != value:
                raise FailedPreconditionError(
                    f"node '{node}' ({op_type}): HashTable has different value for same key. Key "
                    f"{_shown(key)} has {_shown(old)} and trying to add value {_shown(value)}")
            entries[key] = value


def _shown(item):
    if isinstance(item, bytes):
        return item.decode("utf-8", "backslashreplace")
    return str(item.item() if hasattr(item, "item") else item)


def _handle(key):
    out = np.empty((), dtype=object)
    out[()] = key
    return out


def _tables(state):
    tables = state.get(TABLES)
    if tables is None:
        tables = state[TABLES] = {}
    return tables


def _table(state, handle, node, op_type):
    key = np.asarray(handle, dtype=object)[()]
    table = _tables(state).get(key)
    if table is None:  # a handle from a session that has since closed
        raise NotFoundError(f"node '{node}' ({op_type}): Resource {key[0]}/{key[1]} does not exist.")
    return table


def _make_table(mutable):
    def kernel(*, state, node, container, shared_name, use_node_name_sharing, key_dtype, value_dtype):
        key = (container or "localhost", shared_name or node)
        tables = _tables(state)
        table = tables.get(key)
        if table is None:
            tables[key] = table = Table(node, key_dtype, value_dtype, mutable)
        elif (table.key_dtype, table.value_dtype) != (key_dtype, value_dtype):
            raise InvalidArgumentError(
                f"node '{node}': table '{shared_name}' is shared with '{table.name}', which maps "
                f"{table.key_dtype.name} to {table.value_dtype.name}, not {key_dtype.name} to {value_dtype.name}")
        return _handle(key)
    return kernel


def _table_attrs():
    return {"container": Attr("string", ""), "shared_name": Attr("string", ""),
            "use_node_name_sharing": Attr("bool", False), "key_dtype": Attr("type", allowed=KEY_DTYPES),
            "value_dtype": Attr("type", allowed=VALUE_DTYPES)}


HASH_TABLE_V2 = define(
    "HashTableV2", "-> table_handle: resource",
    doc="A read-only hash table, filled once by its initializer; outputs its handle.",
    attrs=_table_attrs(), infer=scalar_shape, kernel=_make_table(False), stateful=True,
    grad=NOT_DIFFERENTIABLE, numerics=EXACT)

MUTABLE_HASH_TABLE_V2 = define(
    "MutableHashTableV2", "-> table_handle: resource",
    doc="A hash table that LookupTableInsertV2 and LookupTableImportV2 may change; outputs its handle.",
    attrs=_table_attrs(), infer=scalar_shape, kernel=_make_table(True), stateful=True,
    grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _flat_keys(keys):
    """A key tensor's items as dict keys: bytes for strings, Python ints for integers."""
    return as_array(keys).reshape(-1).tolist()


def _infer_find(ctx):
    """A table made by a node of this graph declares its dtypes: a mismatch is refused when built."""
    producer = ctx.inputs[0].op
    if producer.type in TABLE_OPS:
        have = ("resource", ctx.attrs["Tin"].name, ctx.attrs["Tout"].name)
        expected = ("resource", producer.attrs["key_dtype"].name, producer.attrs["value_dtype"].name)
        if have != expected:
            raise ctx.error(f"signature mismatch, have: {', '.join(have)} expected: {', '.join(expected)}; "
                            f"table '{producer.name}' maps {expected[1]} to {expected[2]}")
    if ctx.shape(2).ndims not in (None, 0):
        raise ctx.error(f"default_value must be a scalar, got shape {show(ctx.shape(2))}")
    return [ctx.shape(1)]


def _find(table_handle, keys, default_value, *, state, node, Tin, Tout):
    table = _table(state, table_handle, node, "LookupTableFindV2")
    table.check_dtypes(node, "LookupTableFindV2", ("resource", Tin.name, Tout.name),
                       ("resource", table.key_dtype.name, table.value_dtype.name))
    table.check_ready(node, "LookupTableFindV2")
    keys = as_array(keys)
    default = as_array(default_value)
    if default.ndim:
        raise InvalidArgumentError(f"node '{node}' (LookupTableFindV2): Expected shape [] or {show(keys.shape)} "
                                   f"for default value, got {show(default.shape)}")
    get, fallback = table.entries.get, default[()]
    found = [get(k, fallback) for k in keys.reshape(-1).tolist()]
    if Tout is dtypes.string:
        return strings_like(keys.shape, found)
    return np.array(found, dtype=Tout.np).reshape(keys.shape)


LOOKUP_TABLE_FIND_V2 = define(
    "LookupTableFindV2", "table_handle: resource, keys: Tin, default_value: Tout -> values: Tout",
    doc="Each key's value in the table, default_value for a key it lacks.",
    attrs=_FIND_ATTRS, infer=lambda ctx: _infer_find(ctx), kernel=_find,
    stateful=True, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _check_pairs(node, op_type, keys, values):
    keys, values = as_array(keys), as_array(values)
    if keys.shape != values.shape:
        raise InvalidArgumentError(f"node '{node}' ({op_type}): keys and values must have the same shape, got "
                                   f"{show(keys.shape)} and {show(values.shape)}")
    return keys.reshape(-1).tolist(), list(values.reshape(-1))


def _fill(op_type, table_handle, keys, values, types, state, node, initialize, replace):
    table = _table(state, table_handle, node, op_type)
    table.check_dtypes(node, op_type, ("resource", types[0].name, types[1].name),
                       ("resource", table.key_dtype.name, table.value_dtype.name))
    flat_keys, flat_values = _check_pairs(node, op_type, keys, values)
    if initialize and table.initialized:
        _check_same(table, flat_keys, flat_values, node, op_type)
        return ()
    if replace == "all":
        table.entries = {}
    table.insert(flat_keys, flat_values, node, op_type, replace=bool(replace))
    table.initialized = True
    return ()


def _initialize(table_handle, keys, values, *, state, node, Tkey, Tval):
    return _fill("InitializeTableV2", table_handle, keys, values, (Tkey, Tval), state, node, True, False)


def _import(table_handle, keys, values, *, state, node, Tin, Tout):
    return _fill("LookupTableImportV2", table_handle, keys, values, (Tin, Tout), state, node, False, "all")


def _check_same(table, keys, values, node, op_type):
    """TF re-runs an initializer harmlessly when it brings the same entries, else refuses."""
    fresh = Table(table.name, table.key_dtype, table.value_dtype, False)
    fresh.insert(keys, values, node, op_type, replace=False)
    if fresh.entries != table.entries:
        raise FailedPreconditionError(f"node '{node}' ({op_type}): Table was already initialized with different "
                                      f"data. (table '{table.name}')")


def _no_outputs(ctx):
    if ctx.shape(1).ndims is not None and ctx.shape(2).ndims is not None \
            and not ctx.shape(1).is_compatible_with(ctx.shape(2)):
        raise ctx.error(f"keys of shape {show(ctx.shape(1))} and values of shape {show(ctx.shape(2))} "
                        "must have the same shape")
    return []


INITIALIZE_TABLE_V2 = define(
    "InitializeTableV2", "table_handle: resource, keys: Tkey, values: Tval ->",
    doc="Fills the table with keys -> values, once (a second run with the same entries does nothing).",
    attrs={"Tkey": Attr("type", allowed=KEY_DTYPES), "Tval": Attr("type", allowed=VALUE_DTYPES)}, infer=_no_outputs,
    kernel=_initialize, stateful=True,
    grad=NOT_DIFFERENTIABLE, numerics=EXACT)

LOOKUP_TABLE_IMPORT_V2 = define(
    "LookupTableImportV2", "table_handle: resource, keys: Tin, values: Tout ->",
    doc="Replaces the table's content by keys -> values (a HashTable's restore; a MutableHashTable's import).",
    attrs=_FIND_ATTRS, infer=_no_outputs,
    kernel=_import, stateful=True,
    grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _insert(table_handle, keys, values, *, state, node, Tin, Tout):
    table = _table(state, table_handle, node, "LookupTableInsertV2")
    if not table.mutable:
        raise InvalidArgumentError(f"node '{node}' (LookupTableInsertV2): table '{table.name}' is a read-only "
                                   "HashTable; insert needs a MutableHashTable")
    return _fill("LookupTableInsertV2", table_handle, keys, values, (Tin, Tout), state, node, False, True)


LOOKUP_TABLE_INSERT_V2 = define(
    "LookupTableInsertV2", "table_handle: resource, keys: Tin, values: Tout ->",
    doc="Sets keys -> values in a mutable table, replacing what a key had.",
    attrs=_FIND_ATTRS, infer=_no_outputs, kernel=_insert, stateful=True,
    grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _size(table_handle, *, state, node):
    table = _table(state, table_handle, node, "LookupTableSizeV2")
    return np.int64(len(table.entries) if table.initialized else 0)


LOOKUP_TABLE_SIZE_V2 = define(
    "LookupTableSizeV2", "table_handle: resource -> size: int64",
    doc="The number of entries in the table (0 before its initializer ran).",
    infer=scalar_shape, kernel=_size, stateful=True, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _export(table_handle, *, state, node, Tkeys, Tvalues):
    table = _table(state, table_handle, node, "LookupTableExportV2")
    table.check_dtypes(node, "LookupTableExportV2", ("resource", Tkeys.name, Tvalues.name),
                       ("resource", table.key_dtype.name, table.value_dtype.name))
    keys, values = list(table.entries), list(table.entries.values())
    out = []
    for items, dtype in ((keys, Tkeys), (values, Tvalues)):
        out.append(strings_like((len(items),), items) if dtype is dtypes.string
                   else np.array(items, dtype=dtype.np).reshape(len(items)))
    return tuple(out)


LOOKUP_TABLE_EXPORT_V2 = define(
    "LookupTableExportV2", "table_handle: resource -> keys: Tkeys, values: Tvalues",
    doc="Every key of the table and its value, as two vectors (in insertion order; TF's order is unspecified).",
    attrs={"Tkeys": Attr("type", allowed=KEY_DTYPES), "Tvalues": Attr("type", allowed=VALUE_DTYPES)},
    infer=lambda ctx: [TensorShape([None]), TensorShape([None])], kernel=_export, stateful=True,
    grad=NOT_DIFFERENTIABLE, numerics=EXACT)


# -- InitializeTableFromTextFileV2 ------------------------------------------------------------------

def _line_entries(path, node, key_index, value_index, vocab_size, delimiter, offset, key_dtype, value_dtype):
    """(keys, values) of a vocabulary file, as TF's TextFileLineIterator reads it."""
    op_type = "InitializeTableFromTextFileV2"
    shown = path.decode("utf-8", "backslashreplace")
    try:
        size = os.path.getsize(path)
        limit = limits.max_tensor_bytes()
        if size > limit:  # a vocabulary becomes the table's tensors: the same limit as theirs
            raise ResourceExhaustedError(
                f"node '{node}' ({op_type}): {shown} is {limits.format_bytes(size)}, over the tensor size limit "
                f"of {limits.format_bytes(limit)} (set {limits.ENV} to change it)")
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise NotFoundError(f"node '{node}' ({op_type}): {shown}; {e.strerror}") from None
    if not data:  # TF's words for a vocabulary file with no line at all
        raise InvalidArgumentError(f"node '{node}' ({op_type}): {shown}: Read less bytes than requested (the "
                                   "vocabulary file is empty)")
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the newline that ends the last line
    position = 0
    for line in lines[:len(lines) if vocab_size == -1 else vocab_size]:
        position += len(line) + 1
        if not line.removesuffix(b"\r"):  # TF's words, with its byte offset past the empty line
            raise InvalidArgumentError(f"node '{node}' ({op_type}): Invalid content in {shown}: empty line found "
                                       f"at position {min(position, len(data))}.")
    if vocab_size != -1:
        if len(lines) < vocab_size:
            raise InvalidArgumentError(f"node '{node}' ({op_type}): Invalid vocab_size in {shown}: expected "
                                       f"{vocab_size} but got {len(lines)}")
        lines = lines[:vocab_size]
    sep = delimiter.encode("utf-8") if isinstance(delimiter, str) else bytes(delimiter)
    columns = max(key_index, value_index) + 1
    keys, values = [], []
    for number, line in enumerate(lines):
        line = line.removesuffix(b"\r")
        fields = line.split(sep) if columns > 0 and sep else ([line] if columns <= 0 else line.split())
        if columns > len(fields):
            raise InvalidArgumentError(
                f"node '{node}' ({op_type}): Invalid number of columns in {shown} line {number} "
                f"({_shown(line[:80])}) : expected at least {columns} got {len(fields)}")
        keys.append(_field(fields, line, number, key_index, 0, key_dtype, node, shown))
        values.append(_field(fields, line, number, value_index, offset, value_dtype, node, shown))
    return keys, values


def _field(fields, line, number, index, offset, dtype, node, shown):
    if index == LINE_NUMBER:
        if dtype is not dtypes.int64:
            raise InvalidArgumentError(f"node '{node}' (InitializeTableFromTextFileV2): a line number is int64, "
                                       f"but the table's column is {dtype.name}")
        return number + offset
    text = line if index == WHOLE_LINE else fields[index]
    if dtype is dtypes.string:
        return text
    try:
        if dtype.is_integer:
            value = int(text, 10)
            info = np.iinfo(dtype.np)
            if not info.min <= value <= info.max:
                raise ValueError
            return value
        return float(text)
    except ValueError:
        raise InvalidArgumentError(
            f"node '{node}' (InitializeTableFromTextFileV2): Field {_shown(text[:80])} in line {number} is not a "
            f"valid {_C_NAMES.get(dtype.name, dtype.name)}. ({shown})") from None


def _from_text_file(table_handle, filename, *, state, node, key_index, value_index, vocab_size, delimiter,
                    offset):
    op_type = "InitializeTableFromTextFileV2"
    table = _table(state, table_handle, node, op_type)
    name = as_array(filename)
    if name.ndim:
        raise InvalidArgumentError(f"node '{node}' ({op_type}): filename must be a scalar, got shape "
                                   f"{show(name.shape)}")
    for index, what, dtype in ((key_index, "key", table.key_dtype), (value_index, "value", table.value_dtype)):
        if index == WHOLE_LINE and dtype is not dtypes.string:
            raise InvalidArgumentError(f"node '{node}' ({op_type}): the whole line is a string, but the table's "
                                       f"{what}s are {dtype.name}")
    keys, values = _line_entries(name[()], node, key_index, value_index, vocab_size, delimiter, offset,
                                 table.key_dtype, table.value_dtype)
    if table.initialized:
        _check_same(table, keys, values, node, op_type)
        return ()
    table.insert(keys, values, node, op_type, replace=False)
    table.initialized = True
    return ()


def _infer_text_file(ctx):
    if ctx.shape(1).ndims not in (None, 0):
        raise ctx.error(f"filename must be a scalar, got shape {show(ctx.shape(1))}")
    for name in ("key_index", "value_index"):
        if ctx.attrs[name] < WHOLE_LINE:
            raise ctx.error(f"attr '{name}' is {ctx.attrs[name]}; it must be a column (0 or more), -1 (the line "
                            "number) or -2 (the whole line)")
    if ctx.attrs["vocab_size"] < -1:
        raise ctx.error(f"attr 'vocab_size' is {ctx.attrs['vocab_size']}; -1 (every line) or a count")
    return []


INITIALIZE_TABLE_FROM_TEXT_FILE_V2 = define(
    "InitializeTableFromTextFileV2", "table_handle: resource, filename: string ->",
    doc="Fills the table from a vocabulary file: one entry per line, key and value a column, the line or its number.",
    attrs={"key_index": Attr("int"), "value_index": Attr("int"), "vocab_size": Attr("int", -1),
           "delimiter": Attr("string", "\t"), "offset": Attr("int", 0)},
    infer=_infer_text_file, kernel=_from_text_file, stateful=True, grad=NOT_DIFFERENTIABLE, numerics=EXACT)

