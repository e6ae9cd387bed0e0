"""The feed flags run, compare and bench share: --feed, --feeds, --random, --seed, --shape.

Feeds are gathered in two steps because --random fills only what the fetches still need:
`explicit_feeds` reads --feed and --feeds (before the fetches are known, so a bad value is
reported first), then `complete_feeds` adds random values for every needed placeholder
that is still unfed, with its static shape and the --shape overrides.
"""

import argparse

from graphdef.client import feeds as feeding
from graphdef.framework import limits
from graphdef.client.feeds import FeedError
from graphdef.client.output_format import dtype_name
from graphdef.framework.random_feeds import drawable, random_value
from graphdef.framework.shapes import show

# what --random says of a placeholder it cannot fill (a variant or a string); graphrun-cc says the same
NO_RANDOM_VALUES = ("random values are made for float, integer and bool placeholders only; "
                    "fetch a tensor that does not need this one")

HELP = """\
feeds:
  --feed NAME=VALUE  VALUE is JSON (a number, true/false, or a nested array such as
                     [[1,2],[3,4]]) or @FILE.npy
  --feeds FILE.npz   one array per placeholder, keyed by its name (np.savez(f, x=...))
  --random           random values for every needed placeholder not fed otherwise:
                     floats uniform in [-1, 1), integers in 0..9, bools half true;
                     the same values in graphrun-cc for the same --seed (default 0)
  --shape NAME=D,..  the shape of a random feed whose placeholder has unknown dims
  NAME is a Placeholder or PlaceholderWithDefault node (a trailing ":0" is accepted).
  Values are converted to the placeholder's dtype only when that changes no value, and
  their shape must fit the placeholder's. Nothing is ever evaluated as code.
"""


def add_arguments(parser):
    group = parser.add_argument_group("feeds (see below)")
    group.add_argument("--feed", action="append", default=[], metavar="NAME=VALUE",
                       help="a placeholder's value: JSON, or @FILE.npy (repeatable)")
    group.add_argument("--feeds", action="append", default=[], metavar="FILE.npz",
                       help="several placeholders' values from one .npz archive (repeatable)")
    group.add_argument("--random", action="store_true",
                       help="random values for the needed placeholders not otherwise fed")
    group.add_argument("--seed", type=_seed, default=0, metavar="N",
                       help="the seed of --random (default 0)")
    group.add_argument("--shape", action="append", default=[], metavar="NAME=D,D,...",
                       help="the shape of NAME's random value where its placeholder has unknown dims")


def _seed(text):
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < 2 ** 64:
        raise argparse.ArgumentTypeError(f"invalid seed value: '{text}' (a whole number in 0..2**64-1)")
    return value


class FedValues:
    """The feed dict ({placeholder tensor: ndarray}) and where each value came from."""

    def __init__(self):
        self.values = {}
        self.sources = {}

    def describe(self):
        """`x float32 [8,784] random (seed 0), k int32 [] --feed`: how reports list the feeds."""
        if not self.values:
            return "none"
        return ", ".join(f"{t.op.name} {dtype_name(v)} {show(v.shape)} {self.sources[t]}"
                         for t, v in self.values.items())


def explicit_feeds(graph, args):
    """FedValues from --feed and --feeds; FeedError on the first bad one."""
    fed = FedValues()
    feeding.parse_feeds(graph, args.feed, fed.values)
    for tensor in fed.values:
        fed.sources[tensor] = "--feed"
    for path in args.feeds:
        before = set(fed.values)
        feeding.parse_npz(graph, path, fed.values)
        for tensor in fed.values:
            if tensor not in before:
                fed.sources[tensor] = f"--feeds {path}"
    return fed


def complete_feeds(graph, file_order, targets, fed, args):
    """With --random, adds a random value for every placeholder `targets` need and lack."""
    shapes = _parse_shapes(graph, args.shape)
    if shapes and not args.random:
        raise FeedError("--shape sets the shape of --random values; add --random")
    if not args.random:
        return fed
    for tensor in shapes:
        if tensor in fed.values:
            raise FeedError(f"--shape {tensor.op.name}: the placeholder is fed by "
                            f"{fed.sources[tensor]}; --shape applies to --random values only")
    position = {name: i for i, name in enumerate(file_order)}
    missing = sorted(feeding.unfed_placeholders(targets, fed.values), key=lambda op: position[op.name])
    for op in missing:
        tensor = op.outputs[0]
        shape = shapes[tensor] if tensor in shapes else _known_shape(tensor)
        flag = f"--shape {op.name}" if tensor in shapes else f"--random {op.name}"
        if not drawable(tensor.dtype.np):
            raise FeedError(f"--random: placeholder {feeding.describe(op)}: {NO_RANDOM_VALUES}")
        # the command line asked for it: a usage error (exit 2), as in graphrun-cc
        limits.check(shape, tensor.dtype.np, what="random value", where=flag, error=FeedError)
        try:
            fed.values[tensor] = random_value(args.seed, op.name, tensor.dtype.np, shape)
        except MemoryError:  # under the limit, yet more than this process may have: graphrun-cc's words
            raise FeedError(f"--random: placeholder {feeding.describe(op)}: {limits.out_of_memory_text()}") from None
        fed.sources[tensor] = f"random (seed {args.seed})"
    return fed


def _known_shape(tensor):
    dims = tensor.shape.dims
    if dims is not None and None not in dims:
        return dims
    hint = "D,D,..." if dims is None else ",".join("N" if d is None else str(d) for d in dims)
    raise FeedError(f"--random: placeholder {feeding.describe(tensor.op)} has an unknown "
                    f"{'rank' if dims is None else 'dimension'}; give its shape with "
                    f"--shape {tensor.op.name}={hint}")


def _parse_shapes(graph, shape_args):
    """{placeholder tensor: dims} for the --shape NAME=D,D,... strings, checked against the graph."""
    shapes = {}
    for text in shape_args:
        name, sep, value = text.partition("=")
        if not sep or not name:
            raise FeedError(f"--shape expects NAME=D,D,... (e.g. x=8,784), got {text!r}")
        try:
            dims = tuple(int(d) for d in value.split(",")) if value.strip() else ()
        except ValueError:
            dims = None
        if dims is None or any(d < 0 or d >= 1 << 63 for d in dims):  # graphrun-cc reads int64 sizes
            raise FeedError(f"--shape {name}: {value!r} is not a list of sizes such as 8,784")
        if len(dims) > limits.MAX_RANK:
            raise FeedError(f"--shape {name}: the shape has {len(dims)} dims, more than the {limits.MAX_RANK} "
                            "a tensor may have")
        tensor = feeding.find_placeholder(graph, name)
        if tensor in shapes:
            raise FeedError(f"--shape {name}: placeholder '{tensor.op.name}' is given twice")
        if not tensor.shape.is_compatible_with(dims):
            raise FeedError(f"--shape {name}: shape {show(dims)} does not fit placeholder "
                            f"'{tensor.op.name}' ({tensor.dtype.name}), whose shape is {show(tensor.shape)}")
        shapes[tensor] = dims
    return shapes
