"""What graphrun's verbs and graphdef.Runner agree on about a model file: its outputs.

Reading the file is graphdef.wire.serialize.load_with_graph_def, which also returns the
GraphDef as read, because "the outputs" follow the file's own node order: every output of
every node nothing consumes, in file order, so they mean the same thing everywhere (and in
graphrun-cc, which reads the file as written).
"""

import re


# TensorFlow's lowering of functional control flow leaves one unread Placeholder per lowered
# input, named so: residue, neither an input a user feeds nor an output anyone wants
LOWERING_RESIDUE = re.compile(r"(.*/)?unused_control_flow_input(_[0-9]+)?")


def is_lowering_residue(op_type, name, consumed):
    return op_type == "Placeholder" and not consumed and LOWERING_RESIDUE.fullmatch(name) is not None


def output_names(graph, file_order):
    """Every output of every node nothing consumes, nodes in file order, outputs by index
    (TensorFlow's lowering residue left out)."""
    consumed = set()
    for op in graph.get_operations():
        consumed.update(t.op for t in op.inputs)
        consumed.update(op.control_inputs)
    ops = (graph.get_operation_by_name(name) for name in file_order)
    return [t.name for op in ops if op not in consumed and not is_lowering_residue(op.type, op.name, False)
            for t in op.outputs]
