"""graphrun optimize: write the graph after the optimizer's passes, as a plain GraphDef.

The result keeps every input and output node by name, computes the same outputs within the
numerics policy, and uses only op types TensorFlow has, so TensorFlow, Netron and both of
graphdef's runtimes open it. What each pass changed is printed on stderr.
"""

import sys

from graphdef.graphrun import cli
from graphdef.optimize import optimize
from graphdef.wire.serialize import is_text_path, write_graph

DESCRIPTION = ("Optimize a GraphDef: prune what the outputs do not need, remove Identity nodes, fold "
               "constants and batch norms, merge common subexpressions, fuse bias and activation into "
               "TF's fused ops, fold Pads into convolutions; write the result.")

EPILOG = f"""\
passes (in order, repeated until nothing changes):
  prune                 drop nodes the outputs (and --inputs) do not need
  identity              readers of Identity/Snapshot/StopGradient read its input (not for variables)
  constant folding      nodes computable from constants become Consts (up to 10 MiB each)
  batch-norm folding    FusedBatchNorm or Mul/Add after Conv2D/DepthwiseConv2dNative/MatMul goes
                        into the filter and a BiasAdd
  common subexpressions identical stateless nodes on the same inputs are merged
then once:
  bias and activation fusion  float32 Conv2D/MatMul -> BiasAdd (-> Relu, Relu6, Elu, LeakyRelu)
                        becomes TF's _FusedConv2D/_FusedMatMul (not depthwise convolutions: TF runs
                        _FusedDepthwiseConv2dNative only with its oneDNN kernels on)
  pad folding           a zero spatial Pad before a convolution becomes its EXPLICIT padding
Graphs with control flow or a function library are only pruned.

{cli.EXIT_CODES}"""


def build_parser():
    parser = cli.verb_parser("optimize", DESCRIPTION, EPILOG)
    parser.add_argument("-o", "--output", required=True, metavar="FILE",
                        help="where to write the optimized graph (.pbtxt for text)")
    parser.add_argument("--inputs", default="", metavar="A,B",
                        help="nodes fed at run time, kept as they are (default: every Placeholder)")
    parser.add_argument("--outputs", default="", metavar="A,B",
                        help="nodes the result must compute (default: every node nothing consumes)")
    return parser


def _names(text, graph_def, flag):
    names = [n.split(":")[0] for n in text.split(",") if n]
    known = {node.name for node in graph_def.node}
    for name in names:
        if name not in known:
            raise cli.Failure(cli.EXIT_USAGE, f"{flag} {name}: no node of that name in the graph")
    return names


def main(args):
    graph_def = cli.read_model_to_write(args.model)
    inputs = _names(args.inputs, graph_def, "--inputs") or [
        n.name for n in graph_def.node if n.op in ("Placeholder", "PlaceholderWithDefault")]
    outputs = _names(args.outputs, graph_def, "--outputs") or None
    optimized, report = optimize(graph_def, outputs=outputs, keep=inputs)
    write_graph(optimized, "", args.output, as_text=is_text_path(args.output))
    for line in report.lines():
        print(f"graphrun optimize: {line}", file=sys.stderr)
    return cli.EXIT_OK
