"""graphrun convert: write a model again, with its Const weights inside the GraphDef or in a
weights file beside it (graphdef.wire.external_weights), binary or text by the output's name.

Without --external-weights or --inline-weights the weights go outside only when the GraphDef
would pass protobuf's 2 GB limit, as every graphdef writer decides.
"""

from graphdef.graphrun import cli
from graphdef.wire import external_weights
from graphdef.wire.serialize import is_text_path, write_graph

DESCRIPTION = ("Convert a GraphDef: write it with its Const weights in a weights file beside it "
               "(for models over protobuf's 2 GB limit, memory-mapped when run) or back inside it.")

EPILOG = f"""\
weights files:
  --external-weights writes OUTPUT (e.g. model.pb) and OUTPUT's name with .weights (model.weights)
  in the same directory: each Const of at least --threshold bytes keeps its dtype and shape in the
  graph and its bytes in the weights file (64-byte aligned), located by its attr _external_value.
  graphrun, graphrun-cc and graphdef.load map that file; TensorFlow imports such a graph with
  zeros for those Consts, so give TensorFlow the --inline-weights form (models under 2 GB).

{cli.EXIT_CODES}"""


def _threshold(text):
    if not text.isdigit() or int(text) < external_weights.MIN_THRESHOLD:
        raise cli.Failure(cli.EXIT_USAGE, f"--threshold needs a whole number of bytes of at least "
                                          f"{external_weights.MIN_THRESHOLD}, got '{text}'")
    return int(text)


def build_parser():
    parser = cli.verb_parser("convert", DESCRIPTION, EPILOG)
    parser.add_argument("-o", "--output", required=True, metavar="FILE",
                        help="where to write the model (.pbtxt for text)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--external-weights", action="store_true",
                       help="write Const values of at least --threshold bytes to a weights file beside OUTPUT")
    where.add_argument("--inline-weights", action="store_true",
                       help="write every Const value inside the GraphDef (fails over protobuf's 2 GB limit)")
    parser.add_argument("--threshold", type=_threshold, default=external_weights.DEFAULT_THRESHOLD,
                        metavar="BYTES", help=f"with --external-weights, the least size of a value written "
                                              f"outside (default {external_weights.DEFAULT_THRESHOLD})")
    return parser


def main(args):
    graph_def = cli.read_model_to_write(args.model)
    external = True if args.external_weights else False if args.inline_weights else None
    try:
        write_graph(graph_def, "", args.output, as_text=is_text_path(args.output), external_weights=external,
                    external_threshold=args.threshold)
    except external_weights.ExternalWeightsError as e:
        raise cli.Failure(cli.EXIT_MODEL, f"{args.model}: {cli.one_line(e)}") from None
    except ValueError as e:
        raise cli.Failure(cli.EXIT_MODEL, cli.one_line(e)) from None
    except OSError as e:
        raise cli.Failure(cli.EXIT_USAGE, f"cannot write {args.output}: {e.strerror}") from None
    return cli.EXIT_OK
