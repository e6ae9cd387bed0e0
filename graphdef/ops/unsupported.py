"""Nodes a file holds that graphdef cannot run: loaded as they are, refused only when a run needs them.

A well-formed GraphDef always loads, so a model is inspected, saved back and run in the
parts graphdef supports. A node whose op type no definition covers, or whose attrs carry a
dtype graphdef has no numpy type for (string, variant, resource...), becomes an
*unsupported* operation: its NodeDef is kept verbatim (attrs as AttrValue messages, so
as_graph_def writes it back unchanged) and its outputs have the dtype `UNKNOWN`. A node
reading such an output cannot be checked either and is kept the same way, as *dependent*.
Session.run and graphrun refuse a run whose fetches need any of them, with one line:
plain words for TF control flow, the TensorFlow resources (queues, readers, tables,
iterators) it would need, then every op type missing, each with a node.
"""

from dataclasses import dataclass

from graphdef.framework.dtypes import DType
from graphdef.framework.graph import Tensor
from graphdef.framework.shapes import TensorShape
from graphdef.ops.registry import REGISTRY, OpDef

# the dtype of an unsupported node's outputs: nothing can be fed to or computed from it
UNKNOWN = DType("unknown", 0, object)

MISSING_OP = "missing op"          # the op type has no definition
FOREIGN_DTYPE = "foreign dtype"    # defined, but an attr holds a dtype graphdef cannot carry
DEPENDENT = "dependent"            # reads an output of an unsupported node


@dataclass
class UnsupportedOpDef(OpDef):
    reason: str = MISSING_OP
    detail: str = ""               # FOREIGN_DTYPE: the dtype's name; DEPENDENT: the node it reads


def unsupported_opdef(op_type, reason, detail=""):
    return UnsupportedOpDef(op_type, "an op graphdef cannot run", (), (), {}, None, None, reason=reason,
                            detail=detail)


def is_unsupported(op):
    return isinstance(op.opdef, UnsupportedOpDef)


def dtype_of(op):
    """The foreign dtype's name for a node kept for one, else "unknown"."""
    return op.opdef.detail if op.opdef.reason == FOREIGN_DTYPE else "unknown"


# -- what to call it ------------------------------------------------------------------------------

_TF1_LOOP = ("Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration", "LoopCond")
_TF1_COND = ("Switch", "RefSwitch", "Merge", "RefMerge")
_FUNCTIONAL = ("If", "StatelessIf", "While", "StatelessWhile", "Case", "StatelessCase", "PartitionedCall",
               "StatefulPartitionedCall", "For", "RemoteCall", "SymbolicGradient")
_CONTROL_FLOW = (
    (_TF1_LOOP, "a TF1 while-loop (Enter/Exit/NextIteration/LoopCond)"),
    (_TF1_COND, "a TF1 cond (Switch/Merge)"),
    (_FUNCTIONAL, "TF2 functional control flow or function calls (If/While/PartitionedCall)"),
)
# (words in the op type, the resource): ops that work on a resource only TensorFlow's runtime holds
_RESOURCES = (
    (("Queue",), "a TensorFlow queue"),
    (("Reader",), "a TensorFlow reader"),
    (("HashTable", "LookupTable", "InitializeTable", "MutableHashTable", "MutableDenseHashTable"),
     "a TensorFlow lookup table"),
    (("Iterator", "Dataset"), "a tf.data iterator"),
)


def resource_of(op_type):
    for words, resource in _RESOURCES:
        if any(w in op_type for w in words):
            return resource
    return None


def _nodes(names):
    return f"{names[0]}{f' and {len(names) - 1} more' if len(names) > 1 else ''}"


def describe(ops):
    """One line saying why `ops` (unsupported operations a run needs) cannot run."""
    by_type, foreign, dependent = {}, {}, []
    for op in ops:
        reason = op.opdef.reason
        if reason == MISSING_OP:
            by_type.setdefault(op.type or "an empty op type", []).append(op.name)
        elif reason == FOREIGN_DTYPE:
            foreign.setdefault(op.opdef.detail, []).append(f"'{op.name}' ({op.type})")
        else:
            dependent.append(op)
    parts = []
    present = set(by_type)
    for types, words in _CONTROL_FLOW:
        found = [t for t in types if t in present]
        if found:
            parts.append(f"this graph contains {words}, which graphdef cannot run yet")
    resources = {}
    for op_type, names in by_type.items():
        resource = resource_of(op_type)
        if resource:
            resources.setdefault(resource, []).append(f"{op_type} ('{names[0]}')")
    for resource, listed in resources.items():
        parts.append(f"{', '.join(listed)} need{'s' if len(listed) == 1 else ''} {resource}, which exists only "
                     "inside TensorFlow's runtime; feed the tensors it would produce instead")
    if by_type:
        parts.append("no kernel for " + ", ".join(f"{t} ({_nodes(n)})" for t, n in by_type.items()))
    for dtype, listed in foreign.items():
        parts.append(f"{'and ' if parts else ''}{dtype} tensors, which graphdef cannot hold: {_nodes(listed)}")
    if not parts and dependent:   # every unsupported producer is fed, yet its readers were never built
        op = dependent[0]
        parts.append(f"node '{op.name}' ({op.type}) reads '{op.opdef.detail}', from a node graphdef "
                     f"cannot run, so it could not be checked when the graph was loaded; feed '{op.name}' "
                     "or what reads it instead")
    return "; ".join(parts)


def needed_unsupported(roots, fed=()):
    """The unsupported operations a run of `roots` (Tensors and Operations) needs, walking data and
    control inputs back and stopping at fed tensors; in graph order."""
    fed = set(fed)
    seen, found = set(), []
    stack = [r.op if isinstance(r, Tensor) else r for r in roots if not (isinstance(r, Tensor) and r in fed)]
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if is_unsupported(op):
            found.append(op)
        stack.extend(t.op for t in op.inputs if t not in fed)
        stack.extend(op.control_inputs)
    if found:
        position = {op: i for i, op in enumerate(found[0].graph.get_operations())}
        found.sort(key=position.get)
    return found


MAX_OUTPUTS = 1 << 12  # outputs an unknown node may be read at (TF ops have a handful)


def output_count(node, consumers_need):
    """How many outputs an unsupported node has: what its definition says when it has one, else
    what the file's `_output_shapes` lists or its readers ask for (at least one)."""
    opdef = REGISTRY.get(node.op)
    listed = len(node.attr["_output_shapes"].list.shape) if "_output_shapes" in node.attr else 0
    counted = 0
    if opdef is not None:
        try:
            counted = sum(1 if not (a.number_attr or a.type_list) else
                          node.attr[a.number_attr].i if a.number_attr else len(node.attr[a.type_attr].list.type)
                          for a in opdef.outputs)
        except (KeyError, TypeError):
            counted = 0
    count = max(1, listed, counted, consumers_need)
    if count > MAX_OUTPUTS:
        raise ValueError(f"node '{node.name}' ({node.op}): {count} outputs asked of a node graphdef cannot run; "
                         f"at most {MAX_OUTPUTS}")
    return count


def add_unsupported(graph, name, node, reason, detail, inputs, controls, outputs):
    """Adds the node as it is: attrs verbatim, `outputs` outputs of dtype UNKNOWN and unknown shape."""
    opdef = unsupported_opdef(node.op, reason, detail)
    attrs = {key: value for key, value in node.attr.items()}
    return graph.add_op(name, opdef, inputs, attrs, [(UNKNOWN, TensorShape(None))] * outputs, controls)
