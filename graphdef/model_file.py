"""A model file read for running: the Graph with the file's names, and the file's own order.

graphrun's verbs and graphdef.Runner share this, so "the outputs" of a model mean the
same thing everywhere: every output of every node nothing consumes, in file order.
"""

from graphdef.graph import Graph
from graphdef.serialize import GraphFileError, import_graph_def, read_graph_def


def read_model(path):
    """(Graph, GraphDef) for the file at `path`; GraphFileError names the file and the problem.

    This is serialize.load() kept in two steps: the default outputs follow the file's node
    order, and the imported graph holds its nodes in dependency order instead.
    """
    graph_def = read_graph_def(path)
    graph = Graph()
    try:
        import_graph_def(graph_def, name="", graph=graph)
    except GraphFileError as e:
        raise GraphFileError(f"{path}: {e}") from None
    return graph, graph_def


def output_names(graph, file_order):
    """Every output of every node nothing consumes, nodes in file order, outputs by index."""
    consumed = set()
    for op in graph.get_operations():
        consumed.update(t.op for t in op.inputs)
        consumed.update(op.control_inputs)
    ops = (graph.get_operation_by_name(name) for name in file_order)
    return [t.name for op in ops if op not in consumed for t in op.outputs]
