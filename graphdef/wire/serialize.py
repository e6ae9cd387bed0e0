"""Graph <-> GraphDef (TensorFlow's wire format), ndarray <-> TensorProto, and model files."""

import os
import re

from google.protobuf import message, text_format

from graphdef.wire import call_budget, external_weights as _external_module, nesting, pbtxt
from graphdef.wire.atomic import write_atomically
from graphdef.wire.values import (attr_from_proto, attr_to_proto, ndarray_from_proto,  # noqa: F401 - their home
                                  ndarray_to_proto, shape_from_proto, shape_to_proto)
from graphdef.wire.call_check import check_calls, defer
from graphdef.wire.foreign_dtypes import CARRIED_ENUMS, foreign_dtype
from graphdef.wire.functions import FunctionError, attach_library
from graphdef._proto import graph_pb2
from graphdef.framework.graph import Graph, get_default_graph
from graphdef.framework.toposort import CycleError, cycle_text, toposort
from graphdef.framework.gc_pause import gc_paused
from graphdef.ops import REGISTRY
from graphdef.ops import unsupported as unsupported_ops
from graphdef.ops.registry import REQUIRED, create
from graphdef.framework.shapes import TensorShape

# TF_GRAPH_DEF_VERSION of TensorFlow 2.21, whose op definitions these nodes follow.
PRODUCER = 2474
# protobuf refuses to parse a message of 2 GB or more
PROTOBUF_LIMIT = (1 << 31) - 1
TEXT_SUFFIXES = (".pbtxt", ".pb.txt", ".prototxt", ".txt")
# TensorFlow's importer's rule (graphrun-cc checks the same): a letter, digit or dot first, then
# letters, digits and . _ - /, each '>' followed by a letter, digit or dot; no leading '_' (internal ops)
IMPORTABLE_NODE_NAME = re.compile(r"[A-Za-z0-9.][A-Za-z0-9_./-]*(?:>[A-Za-z0-9.][A-Za-z0-9_./-]*)*")


class GraphFileError(ValueError):
    """A file that is not a readable, valid GraphDef; the message names the file and the node."""


# -- tensors ------------------------------------------------------------------------------

def _input_name(tensor):
    return tensor.op.name if tensor.value_index == 0 else tensor.name


def node_to_proto(op, proto=None, add_shapes=False, held=None, threshold=None):
    """The NodeDef of `op`; with `held` (a dict), a Const value of at least `threshold` bytes is
    not copied into the message but left in held[name] (its TensorProto has dtype and shape only)."""
    proto = proto if proto is not None else graph_pb2.NodeDef()
    proto.name = op.name
    proto.op = op.type
    proto.input.extend(_input_name(t) for t in op.inputs)
    proto.input.extend(sorted("^" + c.name for c in op.control_inputs))
    attrs = op.attrs.items()
    for name, value in (sorted(attrs) if len(attrs) > 1 else attrs):
        if name == "_device":  # an imported node's device field (import_nodes keeps it here), not an attr
            proto.device = value
            continue
        # a string tensor's elements are objects, not bytes in place: always written as string_val
        if (held is not None and op.type == "Const" and name == "value" and value.nbytes >= threshold
                and value.dtype.kind != "O"):
            held[op.name] = value
            _external_module.stub_proto(value, proto.attr[name].tensor)
            continue
        attr = op.opdef.attrs.get(name)
        attr_to_proto(attr.kind if attr else None, value, proto.attr[name])
    if add_shapes and op.outputs:
        attr_to_proto("list(shape)", [t.shape for t in op.outputs], proto.attr["_output_shapes"])
    return proto


def graph_to_proto(graph, add_shapes=False, held=None, threshold=None):
    """The GraphDef of `graph`: nodes in creation order, every attr written, a real producer
    (large Const values left in `held`, see node_to_proto)."""
    proto = graph_pb2.GraphDef()
    for op in graph.get_operations():
        node_to_proto(op, proto.node.add(), add_shapes, held, threshold)
    if graph.functions is not None:
        proto.library.CopyFrom(graph.functions.proto)
    proto.versions.producer = PRODUCER
    return proto


def serialize(graph_def):
    """Deterministic bytes (map entries sorted by key), as tf.io.write_graph writes them."""
    return graph_def.SerializeToString(deterministic=True)


def _parse_input(text):
    if text.startswith("^"):
        return text[1:], -1
    name, sep, index = text.rpartition(":")
    if sep and index.isdigit():
        return name, int(index)
    return text, 0


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None, graph=None, defer_calls=False):
    """Adds the nodes of `graph_def` to `graph` (the default graph), prefixed with `name`/.

    Like TF, the prefix defaults to "import"; pass name="" to keep the file's names.
    Every node is checked exactly as a built one is (attrs, input dtypes, shapes), except
    what graphdef cannot run (an unknown op type, a foreign dtype, and what reads them):
    that is kept as it is and refused only by a run that needs it (graphdef.ops.unsupported).
    The file's function library joins the graph's, and every call a node makes is checked here
    against its function (graphdef.wire.call_check), unless `defer_calls`: then the calls wait
    for call_check.check_deferred_calls, for a caller whose C++ engine checks them itself.
    """
    graph = graph if graph is not None else get_default_graph()
    prefix = "import" if name is None else name
    prefix = prefix + "/" if prefix else ""
    try:
        call_budget.check_call_budget(graph_def)  # from the call graph alone, before instantiating
    except call_budget.CallBudgetError as e:
        raise GraphFileError(str(e)) from None
    try:
        with gc_paused():
            if graph_def.library.ByteSize():  # kept even without functions (gradients alone)
                attach_library(graph, graph_def.library, import_nodes)
            created = import_nodes(graph_def, graph, prefix, input_map)
            if defer_calls:
                defer(graph, created.values())
            else:
                check_calls(graph, created.values())
    except FunctionError as e:
        raise GraphFileError(str(e)) from None
    if return_elements is None:
        return None
    return [graph.as_graph_element(prefix + r) for r in return_elements]


def import_nodes(graph_def, graph, prefix="", input_map=None):
    """The nodes of `graph_def` added to `graph`, checked: {node name in the file: Operation}."""
    input_map = dict(input_map or {})

    nodes = {}
    for i, node in enumerate(graph_def.node):
        if not node.name:
            raise GraphFileError(f"node #{i} ({node.op}) has no name")
        if not IMPORTABLE_NODE_NAME.fullmatch(node.name):
            raise GraphFileError(f"node '{node.name}': not a valid node name "
                                 "(letters, digits and . _ / - >, not starting with _ / - >)")
        if node.name in nodes:
            raise GraphFileError(f"node '{node.name}': the name is not unique")
        nodes[node.name] = node
    # each node's inputs parsed once: [(text, source node, output index or -1 for a control input)]
    parsed = {name: [(text, *_parse_input(text)) for text in node.input] for name, node in nodes.items()}
    # every output index a reader asks of a node: how many outputs an unsupported node must have
    asked = {}
    for inputs in parsed.values():
        for _, src, index in inputs:
            if index >= asked.get(src, 0):
                asked[src] = index + 1

    def deps(node_name):
        node = nodes[node_name]
        seen_control = False
        found = []
        for text, src, index in parsed[node_name]:
            if index < 0:
                seen_control = True
            elif seen_control:
                raise GraphFileError(f"node '{node.name}' ({node.op}): data input '{text}' comes after a control "
                                     "input; control inputs must come last")
            source = nodes.get(src)
            if source is None:
                raise GraphFileError(f"node '{node.name}' ({node.op}): input '{text}' names no node in the graph")
            if _is_back_edge(node, source):
                continue  # a loop's NextIteration -> Merge edge: the one kind of cycle TF allows
            if not input_map or (text not in input_map and f"{src}:{max(index, 0)}" not in input_map):
                found.append(src)
        return found

    try:
        # file order when it already puts producers first (so names and order round-trip), else sorted
        seen = set()
        for name in nodes:
            if not seen.issuperset(deps(name)):
                order = [nodes[n] for n in toposort(list(nodes), deps)]
                break
            seen.add(name)
        else:
            order = list(nodes.values())
    except CycleError as e:  # named from its first node in the file, as graphrun-cc names it
        cycle, position = e.cycle, {name: i for i, name in enumerate(nodes)}
        first = min(range(len(cycle)), key=lambda i: position[cycle[i]])
        raise GraphFileError(f"the graph has a cycle: {cycle_text(cycle[first:] + cycle[:first])} (only a "
                             "while loop's NextIteration -> Merge edge may close a cycle)") from None
    except ValueError as e:
        raise GraphFileError(str(e)) from None

    created, back_edges = {}, []
    for node in order:
        where = f"node '{node.name}' ({node.op})"
        unsupported = _why_unsupported(node, parsed[node.name], created, input_map)
        if unsupported:
            reason, detail = unsupported
            inputs, controls = [], []
            for text, src, index in parsed[node.name]:
                if index < 0:
                    controls.append(created[src])
                    continue
                mapped = input_map.get(text, input_map.get(f"{src}:{index}"))
                if mapped is None and src not in created:   # a loop's back edge: linked once its source exists
                    back_edges.append((node.name, len(inputs), src, index))
                    inputs.append(None)
                    continue
                if mapped is None:
                    producer = created[src]
                    if index >= len(producer.outputs):
                        raise GraphFileError(f"{where}: input '{text}' {_past_outputs(index, producer)}")
                    mapped = producer.outputs[index]
                inputs.append(mapped)
            try:
                count = unsupported_ops.output_count(node, asked.get(node.name, 0))
            except ValueError as e:
                raise GraphFileError(str(e)) from None
            created[node.name] = unsupported_ops.add_unsupported(
                graph, graph._claim_exact_name(prefix + node.name), node, reason, detail, inputs, controls, count)
            continue
        opdef = REGISTRY[node.op]
        attrs = {}
        for key, value in sorted(node.attr.items()):  # sorted: the same error every run
            attr = opdef.attrs.get(key)
            if key == _external_module.ATTR:
                continue  # the value it locates becomes attr `value`
            if attr is None:
                attrs[key] = value  # underscore and newer attrs are carried through unchanged
                continue
            if key == "value" and _external_module.is_external(node):
                try:
                    attrs[key] = _external_module.value_of(node)
                except ValueError as e:
                    raise GraphFileError(str(e)) from None
                continue
            if attr.kind in ("type", "list(type)"):
                _check_dtypes_carried(value, f"{where}: attr '{key}'")
            try:
                attrs[key] = attr_from_proto(attr.kind, value, f"{where}: attr '{key}'")
            except ValueError as e:
                raise GraphFileError(str(e)) from None
        inputs, controls = [], []
        for text, src, index in parsed[node.name]:
            if index < 0:
                controls.append(created[src])
                continue
            mapped = input_map.get(text, input_map.get(f"{src}:{index}")) if input_map else None
            if mapped is not None:
                inputs.append(mapped)
                continue
            producer = created.get(src)
            if producer is None:  # a back edge: a stand-in now, the NextIteration once it exists
                back_edges.append((node.name, len(inputs), src, index))
                inputs.append(None)
                continue
            if index >= len(producer.outputs):
                raise GraphFileError(f"{where}: input '{text}' {_past_outputs(index, producer)}")
            inputs.append(producer.outputs[index])
        _check_input_counts(opdef, attrs, len(inputs), where)
        standing_in = [t for t in inputs if t is not None]
        if len(standing_in) < len(inputs):
            if not standing_in:
                raise GraphFileError(f"{where}: every input is a NextIteration back edge; a loop's Merge "
                                     "needs its Enter input too")
            inputs = [standing_in[0] if t is None else t for t in inputs]
        op_name = graph._claim_exact_name(prefix + node.name)
        try:
            op = create(graph, opdef, op_name, inputs, attrs, controls)
        except (TypeError, ValueError) as e:  # the node named once: create's words start "Op 'name': "
            words = str(e).removeprefix(f"{opdef.type} '{op_name}': ")
            raise GraphFileError(f"{where}: {words}") from None
        if node.device:
            op.attrs.setdefault("_device", node.device)
        if len(standing_in) < len(inputs):  # what flows back is not known yet: as TF, assume nothing
            op.outputs[0]._shape = TensorShape(None)
        created[node.name] = op
    _connect_back_edges(graph, created, back_edges)
    return created


def _check_dtypes_carried(value, where):
    """A type attr naming DT_INVALID or a number no proto defines, refused in graphrun-cc's words (a
    dtype TF defines that graphdef cannot carry has already made the node an unsupported one)."""
    field = value.WhichOneof("value")
    if field == "type" and value.type not in CARRIED_ENUMS:
        raise GraphFileError(f"{where} is {_dtype_name(value.type)}, a dtype graphdef does not support")
    if field == "list":
        for enum in value.list.type:
            if enum not in CARRIED_ENUMS:
                raise GraphFileError(f"{where} lists {_dtype_name(enum)}, a dtype graphdef does not support")


def _dtype_name(enum):
    """graphrun-cc's name of a dtype enum a node cannot hold: its proto name, else the number."""
    try:
        return graph_pb2.DataType.Name(enum)
    except ValueError:
        return f"DataType({enum})"


def _past_outputs(index, producer):
    """graphrun-cc's words for an output index past a node's outputs."""
    count = len(producer.outputs)
    return (f"asks for output {index} of node '{producer.name}' ({producer.type}), which has {count} "
            f"output{'' if count == 1 else 's'}")


def _connect_back_edges(graph, created, back_edges):
    """Gives each loop Merge its NextIteration input, once every node exists."""
    for name, position, src, index in back_edges:
        merge, producer = created[name], created[src]
        if index >= len(producer.outputs):
            raise GraphFileError(f"node '{name}' ({merge.type}): input '{src}:{index}' "
                                 f"{_past_outputs(index, producer)}")
        if unsupported_ops.is_unsupported(merge) or unsupported_ops.is_unsupported(producer):
            # linked as the file has it (one side's dtype unknown), so a run that needs the loop names
            # the op graphdef lacks rather than the load failing on a back edge it cannot check
            merge.inputs = merge.inputs[:position] + (producer.outputs[index],) + merge.inputs[position + 1:]
            graph._consumers.setdefault(producer.outputs[index], []).append(merge)
            continue
        try:
            graph._update_input(merge, position, producer.outputs[index])
        except TypeError as e:
            raise GraphFileError(str(e)) from None


_MERGES = ("Merge", "RefMerge")
_NEXT_ITERATIONS = ("NextIteration", "RefNextIteration")


def _is_back_edge(node, source):
    """A TF1 while-loop's Merge reading its NextIteration: the one kind of cycle a GraphDef may hold."""
    return node.op in _MERGES and source.op in _NEXT_ITERATIONS


def _why_unsupported(node, inputs, created, input_map):
    """(reason, detail) when `node` must be kept as an unsupported operation, else None.

    Only what graphdef lacks makes a node unsupported: its op type, a dtype, or an input from
    such a node. A well-formed node of a supported type is checked fully, as it always was.
    """
    if node.op not in REGISTRY:
        return unsupported_ops.MISSING_OP, ""
    foreign = foreign_dtype(node)
    if foreign:
        return unsupported_ops.FOREIGN_DTYPE, foreign
    for text, src, index in inputs:
        if index < 0 or (input_map and (text in input_map or f"{src}:{index}" in input_map)):
            continue
        if src in created and unsupported_ops.is_unsupported(created[src]):
            return unsupported_ops.DEPENDENT, text
    return None


def _check_input_counts(opdef, attrs, got, where):
    """A count attr (Merge's N, AddN's, Pack's...) has no default in TensorFlow's op defs, so its
    importer refuses a node without one, as graphrun-cc does; a Merge's N is checked against its
    inputs here too, in graphrun-cc's words (the other ops' counts are checked where they are made)."""
    counted = [a for a in opdef.inputs if a.number_attr]
    if not counted or any(a.type_list for a in opdef.inputs):
        return
    for arg in counted:
        key = arg.number_attr
        if key not in attrs:
            if opdef.attrs[key].default is REQUIRED:
                raise GraphFileError(f"{where}: missing attr '{key}'")
            attrs[key] = opdef.attrs[key].default
    n = attrs.get("N")
    if opdef.type != "Merge" or isinstance(n, bool) or not isinstance(n, int):
        return
    if n < 1:
        raise GraphFileError(f"{where}: attr 'N' is {n}; Merge needs at least 1")
    if n != got:
        raise GraphFileError(f"{where}: has {got} data input{'' if got == 1 else 's'} but Merge takes {n}")


# -- files --------------------------------------------------------------------------------

def is_text_path(path):
    return str(path).endswith(TEXT_SUFFIXES)


def write_graph(graph_or_graph_def, logdir, name, as_text=True, external_weights=None,
                external_threshold=_external_module.DEFAULT_THRESHOLD):
    """tf.io.write_graph: writes text (the default, as TF does) or binary; returns the path.

    Const values can go to a weights file beside the model (graphdef.wire.external_weights):
    external_weights=None does so only when the GraphDef would pass protobuf's 2 GB limit,
    True for every value of at least `external_threshold` bytes, False never (a graph over
    the limit is then a ValueError).
    """
    path = os.path.join(logdir, name) if logdir else name
    threshold = _external_module.check_threshold(external_threshold)
    held = {}
    if isinstance(graph_or_graph_def, Graph):
        graph_def = graph_to_proto(graph_or_graph_def, held=held, threshold=threshold)
    else:
        graph_def = graph_or_graph_def
        if (external_weights or any(_external_module.is_external(n) for n in graph_def.node)
                or (external_weights is None and graph_def.ByteSize() > PROTOBUF_LIMIT)):
            graph_def = _copy(graph_def)  # the caller's message stays as it was
    outside = _external_module.plan(graph_def, held, external_weights, threshold, PROTOBUF_LIMIT)
    size = graph_def.ByteSize()
    if size > PROTOBUF_LIMIT:
        raise ValueError(f"{path}: {_external_module.too_large_message(size, PROTOBUF_LIMIT)}")

    def encode(message):
        return text_format.MessageToString(message).encode() if as_text else serialize(message)
    if outside:
        _external_module.write(path, graph_def, outside, encode)
    else:
        data = encode(graph_def)
        write_atomically(path, lambda f: f.write(data))
    return path


def _copy(graph_def):
    copy = graph_pb2.GraphDef()
    copy.CopyFrom(graph_def)
    return copy


def save(graph, path, external_weights=None, external_threshold=_external_module.DEFAULT_THRESHOLD):
    """Writes `graph` to `path`: text for .pbtxt, deterministic binary otherwise (weights outside
    as write_graph decides)."""
    return write_graph(graph, "", str(path), as_text=is_text_path(path), external_weights=external_weights,
                       external_threshold=external_threshold)


# Readers of models that are directories, as (accepts(path), read(path, signature) -> GraphDef):
# the SavedModel reader adds itself here (graphdef.wire.saved_model), which builds on this module.
DIRECTORY_FORMATS = []


def read_graph_def(path, signature=None):
    """Parses a .pb (binary) or .pbtxt (text) file, or a model directory a reader in
    DIRECTORY_FORMATS accepts (a SavedModel: `signature` picks which of its signatures, by
    default serving_default); GraphFileError says what is wrong with it."""
    path = str(path)
    if os.path.isdir(path):
        for accepts, read in DIRECTORY_FORMATS:
            if accepts(path):
                return read(path, signature)
    if signature is not None:
        raise GraphFileError(f"{path}: only a SavedModel directory has signatures; drop --signature")
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > PROTOBUF_LIMIT:  # refused before reading: protobuf could not parse it anyway
                raise GraphFileError(f"{path}: the file is {size} bytes, over protobuf's 2 GB limit "
                                     f"({PROTOBUF_LIMIT} bytes) for one GraphDef; write the model with its weights "
                                     "in a file beside it (graphdef's writers do so over 2 GB)")
            data = f.read()
    except FileNotFoundError:
        raise GraphFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise GraphFileError(f"{path}: is a directory, not a model file (nor a SavedModel: it has no "
                             "saved_model.pb)") from None
    except OSError as e:
        raise GraphFileError(f"{path}: cannot read: {e.strerror}") from None
    graph_def = graph_pb2.GraphDef()
    try:
        if is_text_path(path):
            nesting.check_text_nesting(data)  # before text_format, which would recurse as deep
            pbtxt.parse(data, graph_def)
        else:
            graph_def.ParseFromString(data)
    except nesting.NestingError as e:
        raise GraphFileError(f"{path}: {e}") from None
    except (message.DecodeError, text_format.ParseError, UnicodeDecodeError) as e:
        if not is_text_path(path):  # protobuf says no more than that; graphrun-cc words it alike
            raise GraphFileError(f"{path}: not a GraphDef (the protobuf does not parse, or nests deeper than "
                                 f"{nesting.MAX_NESTING} levels)") from None
        raise GraphFileError(f"{path}: not a text-format GraphDef ({_text_error(e)})") from None
    if not graph_def.node:
        raise GraphFileError(f"{path}: not a GraphDef (no nodes)")
    try:
        _external_module.bind(graph_def, os.path.dirname(os.path.abspath(path)))
    except ValueError as e:
        raise GraphFileError(f"{path}: {e}") from None
    return graph_def


def load(path, signature=None):
    """Reads a model file (or a SavedModel directory's `signature`) into a new Graph, keeping
    the file's node names."""
    return load_with_graph_def(path, signature)[0]


def load_with_graph_def(path, signature=None, defer_calls=False):
    """(Graph, GraphDef) for the file at `path`: the file as read, and the graph built from it."""
    graph_def = read_graph_def(path, signature)
    graph = Graph()
    try:
        import_graph_def(graph_def, name="", graph=graph, defer_calls=defer_calls)
    except GraphFileError as e:
        raise GraphFileError(f"{path}: {e}") from None
    graph._loaded_from = path  # what a deferred call check's error names
    return graph, graph_def


def _text_error(exc):
    """protobuf's text parse error as graphrun-cc words it: "line L column C: why", without the
    quoted source line (a 10 MB line would make a 10 MB message) and without Python codec names."""
    if not isinstance(exc, text_format.ParseError):
        return "the file is not UTF-8 text"
    why = str(exc)
    if exc.GetLine() is not None:
        why = why.split(" : ", 1)[-1]
    if why.startswith("'"):  # the tokenizer's "'<current line>': why"
        why = why.rpartition("': ")[2]
    if "codec can't decode" in why and "escape" not in why:
        why = "a string is not valid UTF-8"
    elif "codec" in why:  # escapes are checked by graphdef.wire.pbtxt in graphrun-cc's words; this is a fallback
        why = "invalid escape sequence in string literal"
    why = re.sub(r"\s+", " ", why).lstrip()  # one line; a trailing blank is C++'s ("got: " at the end)
    if len(why) > 160:
        why = why[:160] + "..."
    if exc.GetLine() is None:
        return why
    return f"line {exc.GetLine()} column {exc.GetColumn()}: {why}"


def _one_line(exc):
    return " ".join(str(exc).split()) or type(exc).__name__
