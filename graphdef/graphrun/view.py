"""graphrun view: the graph drawn by Graphviz, name scopes as nested boxes.

The drawing is made for reading a model, as Netron and TensorBoard draw one:
* each name scope (conv1/, conv1/batchnorm/) is a labelled cluster, nested as the names are;
* a node shows its op type, its own name (the part after the scope) when that differs, and
  the dtype and shape of each output (inferred on import; left out if the import fails);
* a Const that other nodes read is not drawn as a node of its own: each reader lists it as a
  row ("toeplitz float32 [64,144]", or "mean = 0.5" for a scalar), as Netron does with weights;
* colours group op families (inputs, matrix products, activations, element-wise math, shape
  ops, reductions, state), outputs have a thick border, control dependencies are dashed.
The layout is Graphviz's `dot`; the output format follows -o's extension.
"""

import html
import os
import shutil
import subprocess

from graphdef.graphrun import cli
from graphdef.framework.graph import Graph
from graphdef.ops import REGISTRY
from graphdef.client.output_format import format_value
from graphdef.ops import unsupported as unsupported_ops
from graphdef.wire.serialize import GraphFileError, import_graph_def, ndarray_from_proto, read_graph_def
from graphdef.framework.shapes import show

FORMATS = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".html": "html", ".dot": "dot", ".gv": "dot"}

DESCRIPTION = "Draw a GraphDef with Graphviz: name scopes as clusters, op types and output shapes on nodes."

EPILOG = f"""\
formats (by -o's extension):
  .svg .png .pdf   rendered by Graphviz's dot (Debian/Ubuntu: apt-get install graphviz)
  .html            one self-contained page holding the SVG
  .dot .gv         the Graphviz source only (no dot needed)

reading the drawing:
  boxes are name scopes; a node shows its op type, its name within the scope, and each
  output's dtype and shape; constants read by a node are listed inside it; thick borders
  mark the outputs (nodes nothing consumes); dashed edges are control dependencies.

{cli.EXIT_CODES}"""

# op type -> (fill, border): families a reader tells apart at a glance
_FAMILIES = [
    (("Placeholder", "PlaceholderWithDefault"), ("#fff2cc", "#c9a227")),
    (("MatMul", "Conv2D", "DepthwiseConv2dNative", "BatchMatMul", "BatchMatMulV2"), ("#dae8fc", "#6c8ebf")),
    (("Relu", "Relu6", "Sigmoid", "Tanh", "Softmax", "Exp", "Log", "Sqrt", "Elu", "Selu"), ("#f8cecc", "#b85450")),
    (("Reshape", "Transpose", "Shape", "Size", "Rank", "BroadcastTo", "Fill", "Range", "ExpandDims", "Squeeze"),
     ("#d5e8d4", "#82b366")),
    (("Sum", "Max", "Min", "Mean", "Prod", "ArgMax", "ArgMin"), ("#e1d5e7", "#9673a6")),
    (("VariableV2", "Assign", "AssignAdd", "AssignSub", "ApplyGradientDescent"), ("#ffe6cc", "#d79b00")),
]
_COLOURS = {op: colours for ops, colours in _FAMILIES for op in ops}
_DEFAULT_COLOURS = ("#f5f5f5", "#666666")
_MAX_ROWS = 4  # constants listed inside one node before "+ N more"
_MAX_VALUES = 8  # a constant with at most this many elements is shown by value


def build_parser():
    parser = cli.verb_parser("view", DESCRIPTION, EPILOG)
    parser.add_argument("-o", "--output", required=True, metavar="FILE",
                        help="where to write the drawing: .svg, .png, .pdf, .html, or .dot")
    return parser


def main(args):
    suffix = os.path.splitext(args.output)[1].lower()
    if suffix not in FORMATS:
        raise cli.Failure(cli.EXIT_USAGE, f"-o {args.output}: unknown format {suffix or '(no extension)'}; "
                                          f"use one of {', '.join(FORMATS)}")
    try:
        graph_def = read_graph_def(args.model)
    except GraphFileError as e:
        raise cli.Failure(cli.EXIT_MODEL, cli.one_line(e)) from None
    source = to_dot(graph_def, _output_specs(graph_def), title=os.path.basename(args.model))
    write(source, args.output, FORMATS[suffix], title=os.path.basename(args.model))
    return cli.EXIT_OK


def _output_specs(graph_def):
    """{node name: [(dtype name, shape text)]} from importing the graph, or {} if it cannot be."""
    graph = Graph()
    try:
        import_graph_def(graph_def, name="", graph=graph)
    except (GraphFileError, RecursionError):
        return {}
    # what graphdef cannot run has no known dtype or shape to draw
    return {op.name: [(t.dtype.name, show(t.shape)) for t in op.outputs] for op in graph.get_operations()
            if not unsupported_ops.is_unsupported(op)}


# -- the DOT source ----------------------------------------------------------------------

def _source(text):
    """(node, is_control) for an input string: "x", "x:1" or "^x"."""
    control = text.startswith("^")
    name = text[1:] if control else text
    node, sep, index = name.rpartition(":")
    return (node if sep and index.isdigit() else name), control


def to_dot(graph_def, specs, title=""):
    """The Graphviz source for `graph_def`; `specs` gives each node's (dtype, shape) outputs."""
    nodes = {node.name: node for node in graph_def.node}
    consumers = {}
    for node in graph_def.node:
        for text in node.input:
            src, control = _source(text)
            consumers.setdefault(src, []).append((node.name, control))
    folded = {name for name, node in nodes.items()
              if node.op == "Const" and consumers.get(name) and all(not c for _, c in consumers[name])}
    ids = {name: f"n{i}" for i, name in enumerate(nodes)}

    tree = _ScopeTree()
    for name in nodes:
        if name not in folded:
            tree.add(name)
    lines = ["digraph graphdef {",
             f'  graph [rankdir=TB, fontname="Helvetica", fontsize=11, nodesep=0.3, ranksep=0.35, '
             f'newrank=true, labelloc=t, label=<<b>{_esc(title)}</b>  <font point-size="9">'
             f'{len(nodes)} nodes</font>>];',
             '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10, '
             'margin="0.10,0.04", penwidth=1];',
             '  edge [color="#7a8594", arrowsize=0.6];']
    lines += tree.render(lambda name: _node_line(nodes[name], ids[name], specs, nodes, folded,
                                                 not consumers.get(name)), indent="  ")
    for node in graph_def.node:
        if node.name in folded:
            continue
        for text in node.input:
            src, control = _source(text)
            if src in folded or src not in ids:
                continue
            style = ' [style=dashed, color="#aab2bd"]' if control else ""
            lines.append(f"  {ids[src]} -> {ids[node.name]}{style};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _node_line(node, node_id, specs, nodes, folded, is_output):
    fill, border = _COLOURS.get(node.op, _DEFAULT_COLOURS)
    leaf = node.name.rsplit("/", 1)[-1]
    rows = [f'<tr><td><b>{_esc(node.op)}</b></td></tr>']
    if leaf != node.op:
        rows.append(f'<tr><td><font point-size="9" color="#333333">{_esc(leaf)}</font></td></tr>')
    for dtype, shape in specs.get(node.name, []):
        rows.append(f'<tr><td><font point-size="9" color="#1f4e79">{_esc(dtype)} {_esc(shape)}</font></td></tr>')
    consts = [(position, _source(text)[0]) for position, text in enumerate(node.input)
              if _source(text)[0] in folded]
    for position, const in consts[:_MAX_ROWS]:
        row = _const_row(nodes[const], _argument_name(node.op, position))
        rows.append(f'<tr><td><font point-size="8" color="#555555">{_esc(row)}</font></td></tr>')
    if len(consts) > _MAX_ROWS:
        rows.append(f'<tr><td><font point-size="8" color="#555555">+ {len(consts) - _MAX_ROWS} more</font></td></tr>')
    label = '<table border="0" cellborder="0" cellspacing="0" cellpadding="1">' + "".join(rows) + "</table>"
    width = ", penwidth=2.2" if is_output else ""
    tooltip = _esc(node.name)
    return f'{node_id} [label=<{label}>, fillcolor="{fill}", color="{border}"{width}, tooltip="{tooltip}"];'


def _argument_name(op_type, position):
    """The op's name for its input `position` (Reshape's 1 is "shape"), when the registry knows it."""
    opdef = REGISTRY.get(op_type)
    if opdef is None or any(arg.number_attr for arg in opdef.inputs) or position >= len(opdef.inputs):
        return None
    return opdef.inputs[position].name


def _const_row(node, argument):
    """How a reader lists a Const: `kernel float32 [32,16]`, or its values when small (`shape = [-1,64]`).

    An automatic name (Const, Const_1) says nothing, so the reader's argument name replaces it.
    """
    leaf = node.name.rsplit("/", 1)[-1]
    if argument and leaf.split("_")[0] == "Const":
        leaf = argument
    tensor = node.attr["value"].tensor
    dims = [d.size for d in tensor.tensor_shape.dim]
    try:
        value = ndarray_from_proto(tensor)
    except (ValueError, KeyError):
        return leaf
    if value.size <= _MAX_VALUES:
        return f"{leaf} = {format_value(value)}"
    return f"{leaf} {value.dtype.name} [{','.join(map(str, dims))}]"


def _esc(text):
    return html.escape(str(text), quote=True)


class _ScopeTree:
    """Node names grouped by their scope path, rendered as nested DOT clusters."""

    def __init__(self):
        self.children = {}   # scope part -> _ScopeTree
        self.nodes = []

    def add(self, name):
        tree = self
        for part in name.split("/")[:-1]:
            tree = tree.children.setdefault(part, _ScopeTree())
        tree.nodes.append(name)

    def render(self, node_line, indent, path="", counter=None):
        counter = counter if counter is not None else [0]
        lines = [indent + node_line(name) for name in self.nodes]
        for part, child in self.children.items():
            counter[0] += 1
            scope = f"{path}/{part}" if path else part
            lines.append(f"{indent}subgraph cluster_{counter[0]} {{")
            lines.append(f'{indent}  label=<<font point-size="10" color="#44505e">{_esc(part)}</font>>; '
                         f'tooltip="{_esc(scope)}"; style="rounded,filled"; fillcolor="#f4f6f9"; '
                         f'color="#c3ccd6"; labeljust=l;')
            lines += child.render(node_line, indent + "  ", scope, counter)
            lines.append(f"{indent}}}")
        return lines


# -- writing ------------------------------------------------------------------------------

def write(source, path, fmt, title=""):
    """Writes `source` as `fmt` to `path`, rendering with dot where needed."""
    if fmt == "dot":
        data = source.encode()
    else:
        data = render(source, "svg" if fmt == "html" else fmt)
        if fmt == "html":
            data = _html_page(data.decode(), title).encode()
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        raise cli.Failure(cli.EXIT_USAGE, f"-o {path}: cannot write ({e.strerror})") from None


def render(source, fmt):
    """dot's output in `fmt` for `source`; a one-line Failure if dot is missing or fails."""
    dot = shutil.which("dot")
    if dot is None:
        raise cli.Failure(cli.EXIT_USAGE, "view needs Graphviz's `dot` program; install it with "
                                          "`apt-get install graphviz` (or write .dot and render it elsewhere)")
    command = [dot, f"-T{fmt}"] + (["-Gdpi=110"] if fmt == "png" else [])
    done = subprocess.run(command, input=source.encode(), capture_output=True)
    if done.returncode != 0:
        message = " ".join(done.stderr.decode(errors="replace").split())
        raise cli.Failure(cli.EXIT_RUN, f"dot failed: {message or f'exit {done.returncode}'}")
    return done.stdout


def _html_page(svg, title):
    start = svg.find("<svg")
    body = svg[start:] if start >= 0 else svg
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{_esc(title)}</title>"
            "<style>body{margin:0;font-family:Helvetica,Arial,sans-serif}"
            "header{padding:8px 12px;background:#f4f6f9;border-bottom:1px solid #c3ccd6}"
            "main{overflow:auto;padding:12px}</style></head><body>"
            f"<header>{_esc(title)} &mdash; drawn by graphrun view; hover a node for its full name</header>"
            f"<main>{body}</main></body></html>\n")
