"""MetaGraphDef: a graph with what TensorFlow needs to restore its variables (`.meta`, SavedModel).

TensorFlow restores a meta graph's variables by running ops inside the graph: the SaverDef
names a filename tensor to feed and a restore op to run. graphdef's Saver adds no ops to the
graph it saves, so export appends TensorFlow's own saver subgraph (as tf.compat.v1.train.Saver
builds it: RestoreV2 and an Assign per variable under `save/`, SaveV2 for saving) to the
GraphDef it writes, as NodeDefs. Import takes that subgraph out again: graphdef restores
variables from the checkpoint files directly (graphdef.wire.checkpoint).
"""

import numpy as np

from graphdef._proto import graph_pb2, meta_graph_pb2
from graphdef.wire.serialize import shape_to_proto

DT_STRING = graph_pb2.DT_STRING
META_GRAPH_VERSION = "graphdef"
# StringJoin is not listed: models join strings too; the saver's own StringJoin (its temporary file name)
# is used by the saver alone, so without_saver drops it with the saver's other inputs
SAVER_OPS = frozenset({"SaveV2", "RestoreV2", "SaveSlices", "RestoreSlice", "Restore", "MergeV2Checkpoints",
                       "ShardedFilename", "ShardedFilespec"})


# -- writing ----------------------------------------------------------------------------------

def _string_const(name, values, shape=None):
    node = graph_pb2.NodeDef(name=name, op="Const")
    node.attr["dtype"].type = DT_STRING
    tensor = node.attr["value"].tensor
    tensor.dtype = DT_STRING
    shape_to_proto(() if shape is None else shape, tensor.tensor_shape)
    tensor.string_val.extend(v.encode() for v in values)
    return node


def _node(name, op, inputs, **attrs):
    node = graph_pb2.NodeDef(name=name, op=op)
    node.input.extend(inputs)
    for key, setter in attrs.items():
        setter(node.attr[key])
    return node


def _fresh_scope(graph_def, base="save"):
    taken = {n.name.split("/")[0] for n in graph_def.node}
    scope, k = base, 1
    while scope in taken:
        scope, k = f"{base}_{k}", k + 1
    return scope


def add_saver(graph_def, variables):
    """Appends TF1's saver subgraph for `variables` ([(checkpoint key, VariableV2 node name, dtype
    enum)]) to `graph_def`; returns its SaverDef."""
    scope = _fresh_scope(graph_def)
    keys = [key for key, _, _ in variables]
    dtypes = [dtype for _, _, dtype in variables]
    n = len(variables)
    graph_def.node.extend([
        _string_const(f"{scope}/Const", ["model"]),
        _string_const(f"{scope}/SaveV2/tensor_names", keys, [n]),
        _string_const(f"{scope}/SaveV2/shape_and_slices", [""] * n, [n]),
        _node(f"{scope}/SaveV2", "SaveV2",
              [f"{scope}/Const", f"{scope}/SaveV2/tensor_names", f"{scope}/SaveV2/shape_and_slices"]
              + [node for _, node, _ in variables],
              dtypes=lambda a: a.list.type.extend(dtypes)),
        _node(f"{scope}/control_dependency", "Identity", [f"{scope}/Const", f"^{scope}/SaveV2"],
              T=lambda a: setattr(a, "type", DT_STRING)),
        _string_const(f"{scope}/RestoreV2/tensor_names", keys, [n]),
        _string_const(f"{scope}/RestoreV2/shape_and_slices", [""] * n, [n]),
        _node(f"{scope}/RestoreV2", "RestoreV2",
              [f"{scope}/Const", f"{scope}/RestoreV2/tensor_names", f"{scope}/RestoreV2/shape_and_slices"],
              dtypes=lambda a: a.list.type.extend(dtypes)),
    ])
    for k, (_, node, dtype) in enumerate(variables):
        graph_def.node.append(_node(f"{scope}/Assign_{k}" if k else f"{scope}/Assign", "Assign",
                                    [node, f"{scope}/RestoreV2:{k}" if k else f"{scope}/RestoreV2"],
                                    T=lambda a, d=dtype: setattr(a, "type", d),
                                    validate_shape=lambda a: setattr(a, "b", True),
                                    use_locking=lambda a: setattr(a, "b", True)))
    graph_def.node.append(_node(f"{scope}/restore_all", "NoOp",
                                [f"^{scope}/Assign_{k}" if k else f"^{scope}/Assign" for k in range(n)]))
    return meta_graph_pb2.SaverDef(filename_tensor_name=f"{scope}/Const:0",
                                   save_tensor_name=f"{scope}/control_dependency:0",
                                   restore_op_name=f"{scope}/restore_all", max_to_keep=5, sharded=False,
                                   keep_checkpoint_every_n_hours=10000.0,
                                   version=meta_graph_pb2.SaverDef.V2)


def variable_collections(variables):
    """The "variables" and "trainable_variables" collections TF1's import_meta_graph rebuilds
    tf.Variable objects from, for graphdef Variables."""
    out = {"variables": meta_graph_pb2.CollectionDef(), "trainable_variables": meta_graph_pb2.CollectionDef()}
    for v in variables:
        proto = meta_graph_pb2.VariableDef(variable_name=v.name, initializer_name=v.initializer.name,
                                           snapshot_name=v._snapshot.name, initial_value_name=v.initial_value.name,
                                           trainable=v.trainable)
        data = proto.SerializeToString()
        out["variables"].bytes_list.value.append(data)
        if v.trainable:
            out["trainable_variables"].bytes_list.value.append(data)
    return out


def build(graph_def, saved, variables=(), tags=(), signature_defs=None):
    """A MetaGraphDef of `graph_def`, with a saver for `saved` ([(checkpoint key, VariableV2 node,
    dtype enum)]) and the variables collections of the graphdef Variables `variables`."""
    meta = meta_graph_pb2.MetaGraphDef()
    meta.meta_info_def.meta_graph_version = META_GRAPH_VERSION
    meta.meta_info_def.tags.extend(tags)
    meta.graph_def.CopyFrom(graph_def)
    if saved:
        meta.saver_def.CopyFrom(add_saver(meta.graph_def, sorted(saved)))
    if variables:
        for name, collection in variable_collections(variables).items():
            meta.collection_def[name].CopyFrom(collection)
    for key, signature in (signature_defs or {}).items():
        meta.signature_def[key].CopyFrom(signature)
    return meta


def tensor_info(tensor):
    """tf.saved_model.utils.build_tensor_info: the tensor's name, dtype and static shape."""
    info = meta_graph_pb2.TensorInfo(name=tensor.name, dtype=tensor.dtype.enum)
    if tensor.shape.ndims is None:
        info.tensor_shape.unknown_rank = True
    else:
        shape_to_proto([-1 if d is None else d for d in tensor.shape.as_list()], info.tensor_shape)
    return info


# -- reading ----------------------------------------------------------------------------------

def _producers(node):
    return [text.lstrip("^").split(":")[0] for text in node.input]


def without_saver(graph_def):
    """A copy of `graph_def` without the saver subgraph: the saver's ops, everything that
    depends on them (the Assigns, restore_all), and whatever only they use (their string
    constants, the filename tensor). The variables stay: the model uses them too."""
    users = {n.name: [] for n in graph_def.node}
    for node in graph_def.node:
        for producer in _producers(node):
            if producer in users:
                users[producer].append(node.name)
    saver = set()
    stack = [n.name for n in graph_def.node if n.op in SAVER_OPS]
    while stack:  # the saver's ops and everything downstream of them
        name = stack.pop()
        if name not in saver:
            saver.add(name)
            stack.extend(users[name])
    # then, upstream, whatever is used by the saver alone: a worklist over each node's count of
    # users outside the saver, linear where rescanning the set until nothing changed was quadratic
    nodes = {n.name: n for n in graph_def.node}
    outside = {name: sum(u not in saver for u in found) for name, found in users.items()}
    stack = list(saver)
    while stack:
        for producer in _producers(nodes[stack.pop()]):
            if producer in users and producer not in saver and outside[producer] == 0:
                saver.add(producer)
                stack.append(producer)
                for own in _producers(nodes[producer]):  # it no longer counts as a user outside
                    if own in outside:
                        outside[own] -= 1
    out = graph_pb2.GraphDef()
    out.CopyFrom(graph_def)
    del out.node[:]
    out.node.extend(n for n in graph_def.node if n.name not in saver)
    return out


def string_values(node):
    """The strings of a DT_STRING Const NodeDef, decoded; [] for anything else."""
    tensor = node.attr["value"].tensor if node.op == "Const" else None
    if tensor is None or tensor.dtype != DT_STRING:
        return []
    count = int(np.prod([d.size for d in tensor.tensor_shape.dim], dtype=object)) if tensor.tensor_shape.dim else 1
    # a lying shape (huge, or negative through a dim below -1) must not size the list
    count = max(0, min(count, max(len(tensor.string_val), 1 << 20)))
    values = [v.decode("utf-8", "replace") for v in tensor.string_val]
    return values + values[-1:] * (count - len(values)) if values else [""] * count


def restored_variables(graph_def):
    """{VariableV2 node: checkpoint key} from the graph's RestoreV2 -> Assign edges, as TF1's
    Saver built them; variables no Assign restores are keyed by their own names."""
    nodes = {n.name: n for n in graph_def.node}
    keys = {}
    for node in graph_def.node:
        if node.op not in ("Assign", "AssignVariableOp") or len(node.input) < 2:
            continue
        source, _, index = node.input[1].partition(":")
        followed = set()
        while source in nodes and nodes[source].op == "Identity" and nodes[source].input and source not in followed:
            followed.add(source)  # an Identity cycle, which load refuses later, must not loop here
            source, _, index = nodes[source].input[0].partition(":")  # TF reads resource restores through one
        restore = nodes.get(source)
        if restore is None or restore.op != "RestoreV2" or len(restore.input) < 2:
            continue
        names = string_values(nodes.get(restore.input[1].split(":")[0], graph_pb2.NodeDef()))
        k = int(index) if index.isdigit() else 0
        target = node.input[0].split(":")[0]
        if k < len(names):
            keys[target] = names[k]
    for node in graph_def.node:
        if node.op in ("VariableV2", "VarHandleOp"):
            keys.setdefault(node.name, node.name)
    return keys
