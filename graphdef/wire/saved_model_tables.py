"""A SavedModel's lookup tables: the initializers its loader runs and the asset files they read.

TensorFlow's loader runs the meta graph's main_op (collection `saved_model_main_op`, or
`legacy_init_op`, or the `__saved_model_init_op` signature of newer writers) after restoring the
variables, feeding each asset tensor the path of its file under `export_dir/assets`. Here the
asset Consts are pointed at those files, and a frozen signature keeps its tables' initializers
under one NoOp, `init_all_tables`, which the Session runs before the first run
(graphdef.client.table_init).
"""

import os

import numpy as np

from graphdef._proto import graph_pb2, meta_graph_pb2
from graphdef.framework import dtypes
from graphdef.framework.text_escape import escape_controls
from graphdef.ops import lookup
from graphdef.ops.lookup import INIT_OP, TABLE_OPS
from graphdef.wire.serialize import GraphFileError
from graphdef.wire.values import ndarray_from_proto, ndarray_to_proto

INIT_COLLECTIONS = ("saved_model_main_op", "legacy_init_op")
INIT_SIGNATURE = "__saved_model_init_op"
ASSETS_COLLECTION = "saved_model_assets"
ASSETS_DIRECTORY = "assets"
TABLE_INITIALIZERS = frozenset(("InitializeTableV2", "InitializeTableFromTextFileV2", "LookupTableImportV2"))
# a TF2 SavedModel fills each table in a function its init op calls with the table's handle
CALL_OPS = frozenset(("StatefulPartitionedCall", "PartitionedCall"))


def _node(tensor_name):
    return tensor_name.lstrip("^").split(":")[0]


def init_ops(meta):
    """The names of the ops TensorFlow's loader runs after restoring the variables."""
    names = []
    for key in INIT_COLLECTIONS:
        if key in meta.collection_def:
            names.extend(_node(v) for v in meta.collection_def[key].node_list.value)
    signature = meta.signature_def.get(INIT_SIGNATURE)
    if signature is not None:
        names.extend(_node(info.name) for info in signature.outputs.values())
    return names


def _varint(data, i):
    value = shift = 0
    while True:
        if i >= len(data):
            raise ValueError("truncated varint")
        byte = data[i]
        value |= (byte & 0x7F) << shift
        i += 1
        if byte < 0x80:
            return value, i
        shift += 7


def _length_delimited(data, wanted):
    """The payloads of the length-delimited fields numbered `wanted` in one serialized message."""
    i, out = 0, []
    while i < len(data):
        key, i = _varint(data, i)
        number, kind = key >> 3, key & 7
        if kind == 0:
            _, i = _varint(data, i)
        elif kind == 1:
            i += 8
        elif kind == 5:
            i += 4
        elif kind == 2:
            n, i = _varint(data, i)
            if number == wanted:
                out.append(data[i:i + n])
            i += n
        else:
            raise ValueError(f"wire type {kind}")
    return out


def asset_files(meta):
    """[(asset tensor name, file name under assets/)], from asset_file_def or, as TF1 writers keep them,
    the `saved_model_assets` collection (an AnyList of AssetFileDef, which graphdef's CollectionDef does
    not declare, so it is read from the message's bytes)."""
    defs = list(meta.asset_file_def)
    if not defs and ASSETS_COLLECTION in meta.collection_def:
        raw = meta.collection_def[ASSETS_COLLECTION].SerializeToString()
        try:
            for any_list in _length_delimited(raw, 5):
                for packed in _length_delimited(any_list, 1):
                    for value in _length_delimited(packed, 2):
                        defs.append(meta_graph_pb2.AssetFileDef.FromString(value))
        except Exception:  # noqa: BLE001 - a malformed collection: no assets, and the file's open names it
            defs = []
    return [(d.tensor_info.name, d.filename) for d in defs if d.tensor_info.name]


def point_assets(graph_def, meta, export_dir):
    """Sets each asset Const of `graph_def` to its file's path under export_dir/assets."""
    nodes = {n.name: n for n in graph_def.node}
    for tensor_name, filename in asset_files(meta):
        node = nodes.get(_node(tensor_name))
        if node is None or node.op != "Const":
            continue
        if os.path.isabs(filename) or os.path.normpath(filename).split(os.sep)[0] in ("..", ".", ""):
            raise GraphFileError(f"{export_dir}: asset '{escape_controls(filename)}' of {tensor_name} is not a "
                                 f"file name under {ASSETS_DIRECTORY}/; re-export the model")
        path = os.path.join(export_dir, ASSETS_DIRECTORY, filename)
        tensor = node.attr["value"].tensor
        del tensor.string_val[:]
        tensor.ClearField("tensor_content")
        tensor.dtype = graph_pb2.DT_STRING
        tensor.string_val.append(path.encode("utf-8"))


def table_initializers(meta, graph_def):
    """The table initializer nodes the loader's init ops run, for tables `graph_def` holds: the
    initializer ops of a TF1 graph, the calls of a TF2 one's initializer functions."""
    if not any(n.op in TABLE_OPS for n in graph_def.node):
        return []
    nodes = {n.name: n for n in meta.graph_def.node}
    found, seen, stack = [], set(), [n for n in init_ops(meta) if n in nodes]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        node = nodes[name]
        tables = [p for p in map(_node, node.input) if p in nodes and nodes[p].op in TABLE_OPS]
        if node.op in TABLE_INITIALIZERS or (node.op in CALL_OPS and tables):
            found.append((name, tables))
            continue
        stack.extend(p for p in map(_node, node.input) if p in nodes)
    kept = {n.name for n in graph_def.node}
    return [name for name, tables in found if any(t in kept for t in tables)]


def add_init_op(graph_def, initializers):
    """A NoOp `init_all_tables` depending on `initializers` (joined to one the graph already has)."""
    if not initializers:
        return
    init = next((n for n in graph_def.node if n.name == INIT_OP), None)
    if init is None:
        init = graph_def.node.add(name=INIT_OP, op="NoOp")
    for name in initializers:
        if f"^{name}" not in init.input:
            init.input.append(f"^{name}")


def inline_vocabularies(graph_def):
    """Each vocabulary-file initializer reading a Const file name becomes an InitializeTableV2 of the
    file's keys and values, and the file-name Consts left unused go: a graph written from a SavedModel
    then carries its vocabularies, not the path of the directory it was converted in. Errors are the
    initializer's own (a missing or malformed file), naming the node."""
    nodes = {n.name: n for n in graph_def.node}
    inlined = []
    for node in list(graph_def.node):
        if node.op != "InitializeTableFromTextFileV2" or len(node.input) != 2:
            continue
        table, filename = nodes.get(_node(node.input[0])), nodes.get(_node(node.input[1]))
        if table is None or table.op not in TABLE_OPS or filename is None or filename.op != "Const":
            continue
        path = ndarray_from_proto(filename.attr["value"].tensor, f"node '{filename.name}'")
        if path.shape != ():
            continue
        key_dtype = dtypes.as_dtype(table.attr["key_dtype"].type)
        value_dtype = dtypes.as_dtype(table.attr["value_dtype"].type)
        attrs = {k: node.attr[k] for k in ("key_index", "value_index", "vocab_size", "delimiter", "offset")}
        keys, values = lookup._line_entries(
            path[()], node.name, attrs["key_index"].i, attrs["value_index"].i,
            attrs["vocab_size"].i if "vocab_size" in node.attr else -1,
            attrs["delimiter"].s.decode("utf-8", "surrogateescape") if "delimiter" in node.attr else "\t",
            attrs["offset"].i, key_dtype, value_dtype)
        inputs = [node.input[0]]
        for suffix, items, dtype in (("keys", keys, key_dtype), ("values", values, value_dtype)):
            const = graph_def.node.add(name=_unused(nodes, f"{node.name}/{suffix}"), op="Const")
            nodes[const.name] = const
            array = dtypes.string_array(items) if dtype is dtypes.string else np.array(items, dtype=dtype.np)
            const.attr["dtype"].type = dtype.enum
            ndarray_to_proto(array.reshape(len(items)), const.attr["value"].tensor)
            inputs.append(const.name)
        controls = [i for i in node.input if i.startswith("^")]
        name, device = node.name, node.device
        node.Clear()
        node.name, node.op, node.device = name, "InitializeTableV2", device
        node.input.extend(inputs + controls)
        node.attr["Tkey"].type = key_dtype.enum
        node.attr["Tval"].type = value_dtype.enum
        inlined.append(filename.name)
    used = {_node(i) for n in graph_def.node for i in n.input}
    unused = [i for i, n in enumerate(graph_def.node) if n.name in inlined and n.name not in used]
    for i in reversed(unused):
        del graph_def.node[i]
    return len(inlined)


def _unused(nodes, name):
    found, k = name, 0
    while found in nodes:
        k += 1
        found = f"{name}_{k}"
    return found
