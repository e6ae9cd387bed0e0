"""graphrun inspect: what a model file holds, before anyone has to guess names.

Everything but the outputs' dtypes and shapes is read from the GraphDef itself, so a
model with ops no runtime implements is still described (and those ops are listed)
instead of refused. The outputs' dtypes and shapes come from importing the graph, which
infers them; when the import fails they are unknown (null in --json, ? in text).

Parameters are the elements of every Const and VariableV2 node, except a Const used
only as the value of Assign nodes: that is a variable's initial value, counted once, as
the variable.
"""

import json
import math
import shlex
import sys

from graphdef.graphrun import cli, inspect_saved_model

from graphdef.framework import dtypes
from graphdef.framework.graph import Graph
from graphdef.framework.text_escape import escape_text
from graphdef._proto import graph_pb2
from graphdef.wire.model_file import is_lowering_residue, output_names
from graphdef.ops import REGISTRY
from graphdef.ops import unsupported as unsupported_ops
from graphdef.optimize import at_load
from graphdef.wire import saved_model
from graphdef.wire.serialize import GraphFileError, import_graph_def, is_text_path, read_graph_def

PLACEHOLDERS = ("Placeholder", "PlaceholderWithDefault")

DESCRIPTION = "Describe a GraphDef: inputs, outputs, op types, parameters, unsupported ops."

EPILOG = f"""\
text output (one section each; --json prints one JSON document with the same facts):
  model: the file, its format, producer version and node count
  inputs: every Placeholder (and PlaceholderWithDefault, marked "has a default") with
          its dtype and shape, ? for an unknown dim, <unknown> for an unknown rank
  outputs: every output of every node nothing consumes, with dtype and inferred shape
  parameters: elements and bytes of Const and VariableV2 values (a variable's initial
          value is counted once, as the variable)
  op types: a histogram, most frequent first
  functions: when the file has a function library (If, While, PartitionedCall call
          them): each function's name, argument and result dtypes, and node count
  unsupported ops: op types no kernel exists for, with a node of each
  optimized at load: what the load-time passes change when the model runs for its
          default outputs (node counts, changes per pass); absent when nothing changes
          or with --no-optimize (or GRAPHDEF_OPTIMIZE=0)
  try: a graphrun command that runs the model on random inputs
A SavedModel directory lists its meta graphs' tags and signatures (inputs and outputs: key,
dtype, shape, tensor name) as saved_model_cli show --all does; --signature KEY describes that
signature's frozen graph instead.

{cli.EXIT_CODES}"""


def build_parser():
    parser = cli.verb_parser("inspect", DESCRIPTION, EPILOG)
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    cli.add_optimize_argument(parser)
    parser.add_argument("--signature", metavar="KEY",
                        help="with a SavedModel directory: describe that signature's frozen graph instead of "
                             "listing the meta graphs and signatures")
    return parser


def main(args):
    if saved_model.is_saved_model(args.model) and args.signature is None:
        try:
            facts = inspect_saved_model.listing(args.model)
        except GraphFileError as e:
            raise cli.Failure(cli.EXIT_MODEL, cli.one_line(e)) from None
        sys.stdout.write(json.dumps(facts) + "\n" if args.json else inspect_saved_model.format_listing(facts))
        sys.stdout.flush()
        return cli.EXIT_OK
    summary = summarize(args.model, args.signature, at_load.enabled(cli.optimize_switch(args)))
    text = json.dumps(summary) + "\n" if args.json else escape_text(format_summary(summary))
    sys.stdout.write(text)
    sys.stdout.flush()
    return cli.EXIT_OK


# -- the facts ----------------------------------------------------------------------------

def summarize(path, signature=None, optimize=False):
    """The description of the model at `path` (a SavedModel directory's `signature`) as a
    JSON-ready dict; Failure(3) if unreadable. With `optimize`, it also says what the load-time
    passes change (key "optimized")."""
    try:
        graph_def = read_graph_def(path, signature)
    except GraphFileError as e:
        raise cli.Failure(cli.EXIT_MODEL, cli.one_line(e)) from None
    unsupported = _unsupported(graph_def)
    outputs, load_error = _outputs(graph_def, unsupported)
    summary = {
        "model": str(path),
        "format": "text" if is_text_path(path) else "binary",
        "producer": graph_def.versions.producer,
        "min_consumer": graph_def.versions.min_consumer,
        "nodes": len(graph_def.node),
        "inputs": _inputs(graph_def),
        "outputs": outputs,
        "parameters": _parameters(graph_def),
        "op_types": _histogram(graph_def),
        "unsupported_ops": unsupported,
        "load_error": load_error,
    }
    if graph_def.library.function:  # graphs without a library are described as they always were
        summary["functions"] = _functions(graph_def.library)
    if optimize and not unsupported and load_error is None:
        report = at_load.report_for_file(graph_def, [i["name"] for i in summary["inputs"]])
        if report is not None:
            summary["optimized"] = report.as_dict()
    return summary


def _functions(library):
    def args(arg_defs, fdef):
        return [{"name": a.name, "dtype": _arg_dtype(a, fdef)} for a in arg_defs]
    return [{"name": f.signature.name, "inputs": args(f.signature.input_arg, f),
             "outputs": args(f.signature.output_arg, f), "nodes": len(f.node_def)} for f in library.function]


def _arg_dtype(arg, fdef):
    if arg.type_attr and arg.type_attr in fdef.attr:
        return _dtype_name(fdef.attr[arg.type_attr].type)
    if arg.number_attr or arg.type_list_attr or arg.type_attr:
        return None
    return _dtype_name(arg.type)


def _inputs(graph_def):
    """Every Placeholder but TensorFlow's lowering residue (unread `unused_control_flow_input`s)."""
    read = {_source(text) for node in graph_def.node for text in node.input}
    return [_input(node) for node in graph_def.node
            if node.op in PLACEHOLDERS and not is_lowering_residue(node.op, node.name, node.name in read)]


def _input(node):
    dtype = _dtype_name(node.attr["dtype"].type) if "dtype" in node.attr else None
    shape_attr = node.attr["shape"].shape if "shape" in node.attr else None
    if shape_attr is None or shape_attr.unknown_rank:
        shape = None
    else:
        shape = [None if d.size < 0 else d.size for d in shape_attr.dim]
    return {"name": node.name, "op": node.op, "dtype": dtype, "shape": shape}


def _dtype_name(enum):
    """graphdef's name for the dtypes it holds ("float32"), TensorFlow's for the others ("string",
    "variant", "resource", "bfloat16", "float_ref"), the number for what TensorFlow never defined."""
    try:
        return dtypes.as_dtype(enum).name + ("_ref" if enum > 100 else "")
    except TypeError:
        pass
    if enum in graph_pb2.DataType.values():
        return graph_pb2.DataType.Name(enum).removeprefix("DT_").lower()
    return f"DataType {enum}"


def _outputs(graph_def, unsupported):
    """The outputs with inferred dtype and shape, and why they are unknown if the import fails."""
    graph = Graph()
    try:
        import_graph_def(graph_def, name="", graph=graph)
    except (GraphFileError, RecursionError) as e:
        consumed = {_source(text) for node in graph_def.node for text in node.input}
        sinks = [n.name + ":0" for n in graph_def.node if n.name not in consumed and n.op != "NoOp"
                 and not is_lowering_residue(n.op, n.name, False)]
        error = None if unsupported else cli.one_line(e)
        return [{"name": name, "dtype": None, "shape": None} for name in sinks], error
    file_order = [node.name for node in graph_def.node]
    outputs = []
    for name in output_names(graph, file_order):
        tensor = graph.get_tensor_by_name(name)
        if tensor.dtype is unsupported_ops.UNKNOWN:   # made by a node no definition describes
            outputs.append({"name": name, "dtype": None, "shape": None})
            continue
        dims = tensor.shape.dims
        outputs.append({"name": name, "dtype": tensor.dtype.name, "shape": None if dims is None else list(dims)})
    return outputs, None


def _source(input_text):
    """The node an input string ("x", "x:1", "^x") reads from."""
    name = input_text[1:] if input_text.startswith("^") else input_text
    node, sep, index = name.rpartition(":")
    return node if sep and index.isdigit() else name


def _parameters(graph_def):
    consumers = {}
    for node in graph_def.node:
        for position, text in enumerate(node.input):
            consumers.setdefault(_source(text), []).append((node.op, position, text.startswith("^")))
    count = size = consts = variables = 0
    for node in graph_def.node:
        if node.op == "Const":
            uses = consumers.get(node.name, [])
            if uses and all(op == "Assign" and position == 1 and not control for op, position, control in uses):
                continue  # a variable's initial value
            tensor = node.attr["value"].tensor
            n, itemsize = _elements(tensor.tensor_shape), _itemsize(tensor.dtype)
            consts += 1
        elif node.op == "VariableV2":
            n, itemsize = _elements(node.attr["shape"].shape), _itemsize(node.attr["dtype"].type)
            variables += 1
        else:
            continue
        count += n
        size += n * itemsize
    return {"count": count, "bytes": size, "const_nodes": consts, "variable_nodes": variables}


def _elements(shape_proto):
    if shape_proto.unknown_rank or any(d.size < 0 for d in shape_proto.dim):
        return 0
    return math.prod(d.size for d in shape_proto.dim)


def _itemsize(enum):
    """Bytes per element; 0 for strings, whose sizes vary (graphrun-cc counts them so too)."""
    try:
        dtype = dtypes.as_dtype(enum)
    except TypeError:
        return 0
    return 0 if dtype.np.kind == "O" else dtype.np.itemsize


def _histogram(graph_def):
    counts = {}
    for node in graph_def.node:
        counts[node.op] = counts.get(node.op, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [{"op": op, "count": n} for op, n in ranked]


def _unsupported(graph_def):
    found = {}
    nodes = [(node, node.name) for node in graph_def.node]
    nodes += [(node, f"{node.name} (in {f.signature.name})") for f in graph_def.library.function for node in f.node_def]
    for node, label in nodes:
        if node.op not in REGISTRY:
            entry = found.setdefault(node.op, {"op": node.op, "count": 0, "first_node": label})
            entry["count"] += 1
    return list(found.values())


# -- the text form ------------------------------------------------------------------------

def show_shape(shape):
    if shape is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _table(rows, indent="  "):
    """Rows of cells as left-aligned columns two spaces apart."""
    if not rows:
        return [indent + "none"]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [indent + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def format_summary(s):
    lines = [f"model: {s['model']}",
             f"  {s['format']} GraphDef, producer {s['producer']}, {s['nodes']} nodes"]
    lines.append(f"inputs ({len(s['inputs'])}):")
    lines += _table([[i["name"], i["dtype"] or "?", show_shape(i["shape"]),
                      "has a default" if i["op"] == "PlaceholderWithDefault" else ""] for i in s["inputs"]])
    lines.append(f"outputs ({len(s['outputs'])}):")
    lines += _table([[o["name"], o["dtype"] or "?", "?" if o["dtype"] is None else show_shape(o["shape"])]
                     for o in s["outputs"]])
    p = s["parameters"]
    lines.append(f"parameters: {p['count']} values, {p['bytes']} bytes "
                 f"in {p['const_nodes']} Const and {p['variable_nodes']} VariableV2 nodes")
    lines.append(f"op types ({len(s['op_types'])}):")
    lines += _table([[t["op"], str(t["count"])] for t in s["op_types"]])
    if "functions" in s:
        lines.append(f"functions ({len(s['functions'])}):")
        lines += _table([[f["name"], _signature(f), f"{f['nodes']} node{'' if f['nodes'] == 1 else 's'}"]
                         for f in s["functions"]])
    if s["unsupported_ops"]:
        lines.append(f"unsupported ops ({len(s['unsupported_ops'])}): no kernel for")
        lines += _table([[u["op"], f"{u['count']} node{'s' if u['count'] > 1 else ''}",
                          f"e.g. {u['first_node']}"] for u in s["unsupported_ops"]])
    else:
        lines.append("unsupported ops: none")
    if "optimized" in s:
        lines.append("optimized at load: " + optimized_line(s["optimized"]))
    if s["load_error"]:
        lines.append(f"cannot be run: {s['load_error']}")
    elif not s["unsupported_ops"]:
        lines.append("try:")
        lines.append("  " + _try_command(s))
    return "".join(line.rstrip() + "\n" for line in lines)


def optimized_line(optimized):
    """"1052 nodes -> 293 (prune 53, identity 262, ...)": the passes' changes, as bench shows them too."""
    passes = ", ".join(f"{name} {count}" for name, count in optimized["passes"].items())
    return f"{optimized['nodes_before']} nodes -> {optimized['nodes_after']} ({passes})"


def _signature(function):
    """Argument and result dtypes, "(float32, int32) -> (float32)"; --json has their names too."""
    def listed(args):
        return ", ".join(a["dtype"] or "?" for a in args)
    return f"({listed(function['inputs'])}) -> ({listed(function['outputs'])})"


def _try_command(s):
    """graphrun on random inputs, with a batch of 1 wherever a dim is unknown."""
    words = ["graphrun", shlex.quote(s["model"])]
    needed = [i for i in s["inputs"] if i["op"] == "Placeholder"]
    if needed:
        words.append("--random")
    for i in needed:
        if i["shape"] is not None and None in i["shape"]:
            dims = ",".join("1" if d is None else str(d) for d in i["shape"])
            words += ["--shape", shlex.quote(f"{i['name']}={dims}")]
    return " ".join(words)
