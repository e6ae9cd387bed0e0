"""A frozen signature's input and output keys as node names, as saved_model_cli uses them.

A SavedModel's signature maps keys ("x", "output_0") to tensors ("serving_default_x:0",
"StatefulPartitionedCall:0"). After freezing, the graph is an ordinary GraphDef whose
runtimes feed and fetch by node name, so the keys become names: an input's Placeholder is
renamed to its key, and each output gets an Identity named by its key. A key already naming
another node is left as it is (that node keeps its name; the tensor name still works).
graphrun-cc does the same in runner/graph/saved_model.cc.
"""

from graphdef._proto import graph_pb2


def _tensor(name):
    node, _, index = name.partition(":")
    return node, int(index) if index.isdigit() else 0


def _rename(graph_def, old, new):
    for node in graph_def.node:
        if node.name == old:
            node.name = new
        for k, ref in enumerate(node.input):
            control = ref.startswith("^")
            producer, sep, index = ref.lstrip("^").partition(":")
            if producer == old:
                node.input[k] = ("^" if control else "") + new + sep + index


def name_by_keys(graph_def, signature):
    """Renames/aliases in place; returns ({input key: tensor}, {output key: tensor}) as now named."""
    names = {n.name for n in graph_def.node}
    inputs, outputs, renamed = {}, {}, {}
    for key in sorted(signature.inputs):
        node, index = _tensor(signature.inputs[key].name)
        inputs[key] = signature.inputs[key].name
        if node == key and index == 0:
            continue
        if node in names and index == 0 and key not in names:
            _rename(graph_def, node, key)
            names = (names - {node}) | {key}
            renamed[node] = key
            inputs[key] = f"{key}:0"
    for key in sorted(signature.outputs):
        info = signature.outputs[key]
        node, index = _tensor(info.name)
        outputs[key] = info.name
        if node == key and index == 0:
            continue
        node = renamed.get(node, node)
        if node in names and key not in names and info.dtype != graph_pb2.DT_INVALID:
            alias = graph_def.node.add(name=key, op="Identity", input=[node if index == 0 else f"{node}:{index}"])
            alias.attr["T"].type = info.dtype
            names.add(key)
            outputs[key] = f"{key}:0"
    return inputs, outputs
