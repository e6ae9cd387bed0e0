"""graphrun batch: stream an .npy dataset through the model into an .npy of results.

The inputs are memory-mapped and read a batch of rows at a time, and the pages behind
finished rows are handed back as the stream moves on; the results are appended to the
output file batch by batch (see graphdef.graphrun.npy_stream). So memory stays flat whatever the
dataset's size. The output is written to a temporary file beside the target and renamed
into place only when every row is done.
"""

import os
import sys
import time

import numpy as np

from graphdef.graphrun import cli, feed_options
from graphdef.client import feeds as feeding
from graphdef.framework.errors import OpError
from graphdef.graphrun.npy_stream import NpyError, NpyMap, NpyWriter
from graphdef.client.output_format import format_shape
from graphdef.client.runtime import ENGINES
from graphdef.client.session import Session
from graphdef.framework.shapes import show

DESCRIPTION = ("Stream a dataset in .npy files through a GraphDef, a batch of rows at a time, "
               "into an .npy file of results; memory stays flat.")

EPILOG = f"""\
data:
  --input NAME=FILE.npy gives placeholder NAME its rows from FILE (memory-mapped); every
  --input file must have the same number of rows (its first dimension). The output must
  have one row per input row; its file has shape [rows, ...] and the fetched dtype.
  Other placeholders can be given one value for every batch with --feed or --feeds.

progress:
  a progress bar on stderr when stderr is a terminal and tqdm is installed (pip install
  'graphdef[cli]'); --quiet turns it off, and the summary line on stdout too.

example:
  graphrun batch model.pb --input x=features.npy --output scores.npy --batch-size 4096

{cli.EXIT_CODES}"""


def build_parser():
    parser = cli.verb_parser("batch", DESCRIPTION, EPILOG)
    parser.add_argument("--input", action="append", default=[], required=True, metavar="NAME=FILE.npy",
                        help="a placeholder's rows, memory-mapped from an .npy file (repeatable)")
    parser.add_argument("--output", required=True, metavar="FILE.npy", help="where to write the results")
    parser.add_argument("--batch-size", type=_positive, default=1024, metavar="N", help="rows per run (default 1024)")
    parser.add_argument("--feed", action="append", default=[], metavar="NAME=VALUE",
                        help="a placeholder's value for every batch: JSON, or @FILE.npy (repeatable)")
    parser.add_argument("--feeds", action="append", default=[], metavar="FILE.npz",
                        help="values for every batch from an .npz archive (repeatable)")
    cli.add_fetch_argument(parser, '"node" or "node:k" to compute (default: the model\'s one output)')
    cli.add_optimize_argument(parser)
    parser.add_argument("--engine", choices=ENGINES, help="the Session's engine (default auto: the C++ core "
                                                          "where it has every kernel, else numpy)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no summary line")
    return parser


def _positive(text):
    value = int(text)
    if value < 1:
        raise ValueError("not positive")
    return value


_positive.__name__ = "batch size"


def main(args):
    graph, file_order = cli.load_model(args.model, optimize=cli.optimize_switch(args))
    try:
        constant = feed_options.explicit_feeds(graph, args).values
    except feeding.FeedError as e:
        raise cli.Failure(cli.EXIT_USAGE, str(e)) from None
    target = _target(graph, file_order, args.fetch)
    inputs = _open_inputs(graph, args.input, constant)
    try:
        rows = _common_rows(inputs)
        cli.check_fed([target], {**constant, **{t: None for t in inputs}})
        started = time.perf_counter()
        written = stream(graph, target, inputs, constant, rows, args.batch_size, args.output,
                         progress=not args.quiet and sys.stderr.isatty(), engine=args.engine,
                         optimize=cli.optimize_switch(args))
        seconds = time.perf_counter() - started
    finally:
        for mapped in inputs.values():
            mapped.close()
    if not args.quiet:
        rate = rows / seconds if seconds > 0 else float("inf")
        sys.stdout.write(f"{args.output}: {target.name} {written[0]} {format_shape(written[1])}, "
                             f"{rows} rows in {seconds:.2f} s ({rate:,.0f} rows/s)\n")
        sys.stdout.flush()
    return cli.EXIT_OK


def _target(graph, file_order, fetch):
    names = fetch or cli.default_fetches(graph, file_order)
    if len(names) != 1:
        listed = ", ".join(names) if names else "none"
        raise cli.Failure(cli.EXIT_USAGE, f"batch writes one output; the model's outputs are {listed}: "
                                          "choose one with --fetch")
    return cli.resolve_fetch(graph, names[0])


def _open_inputs(graph, specs, constant):
    """{placeholder tensor: NpyMap} for the --input NAME=FILE.npy strings."""
    inputs = {}
    try:
        for text in specs:
            name, sep, path = text.partition("=")
            if not sep or not name or not path:
                raise cli.Failure(cli.EXIT_USAGE, f"--input expects NAME=FILE.npy, got {text!r}")
            try:
                tensor = feeding.find_placeholder(graph, name)
            except feeding.FeedError as e:
                raise cli.Failure(cli.EXIT_USAGE, f"--input {e}") from None
            if tensor in inputs or tensor in constant:
                raise cli.Failure(cli.EXIT_USAGE, f"--input {name}: placeholder '{tensor.op.name}' is fed twice")
            try:
                inputs[tensor] = NpyMap(path)
            except NpyError as e:
                raise cli.Failure(cli.EXIT_USAGE, f"--input {name}: {e}") from None
            _check_input(tensor, inputs[tensor].array, name)
    except BaseException:
        for mapped in inputs.values():
            mapped.close()
        raise
    return inputs


def _check_input(tensor, array, name):
    """The file's rows must fit the placeholder: its dtype family and every dim after the first."""
    if array.dtype.kind not in "biuf":
        raise cli.Failure(cli.EXIT_USAGE, f"--input {name}: {array.dtype} data cannot be fed")
    if array.ndim == 0:
        raise cli.Failure(cli.EXIT_USAGE, f"--input {name}: the file holds a scalar; batch needs rows")
    static = tensor.shape.dims
    row_shape = (None,) + array.shape[1:]
    if static is not None and (len(static) != len(row_shape) or any(
            d is not None and n is not None and d != n for d, n in zip(static, row_shape))):
        raise cli.Failure(cli.EXIT_USAGE, f"--input {name}: rows of shape {format_shape(array.shape[1:])} "
                                          f"(file shape {format_shape(array.shape)}) do not fit placeholder "
                                          f"'{tensor.op.name}', whose shape is {show(static)}")


def _common_rows(inputs):
    counts = {t.op.name: m.array.shape[0] for t, m in inputs.items()}
    if len(set(counts.values())) > 1:
        listed = ", ".join(f"{name} {n}" for name, n in counts.items())
        raise cli.Failure(cli.EXIT_USAGE, f"--input files differ in rows: {listed}")
    return next(iter(counts.values()))


def stream(graph, target, inputs, constant, rows, batch_size, output, progress=False, engine=None, optimize=None):
    """Runs every batch and writes the results to `output`; returns (dtype name, shape) written."""
    directory = os.path.dirname(os.path.abspath(output))
    # beside the target, so the final rename cannot cross file systems; created by open(), so
    # the file gets the usual permissions
    partial = os.path.join(directory, f".{os.path.basename(output)}.partial-{os.getpid()}")
    session = Session(graph=graph, engine=engine, optimize=optimize)
    bar = _progress_bar(rows) if progress else None
    feed_dict = dict(constant)
    same_dtype = [(t, m.array) for t, m in inputs.items() if m.array.dtype == t.dtype.np]
    other_dtype = [(t, m.array) for t, m in inputs.items() if m.array.dtype != t.dtype.np]
    maps = list(inputs.values())
    out = None
    try:
        for start in range(0, max(rows, 1), batch_size):  # an empty dataset still runs once, for the output's shape
            stop = min(start + batch_size, rows)
            for tensor, array in same_dtype:
                feed_dict[tensor] = array[start:stop]
            for tensor, array in other_dtype:
                feed_dict[tensor] = _converted(array[start:stop], tensor)
            result = _run_batch(session, target, feed_dict, start, stop)
            if out is None:
                out = _create_output(partial, result, rows, stop - start, target)
            _write(out, result, target, start, stop)
            for mapped in maps:
                mapped.done_with_rows(stop)
            if bar is not None:
                bar.update(stop - start)
        written = (out.dtype.name, out.shape)
        out.close()
        out = None
        os.replace(partial, output)
    except OSError as e:
        raise cli.Failure(cli.EXIT_USAGE, f"--output {output}: cannot write ({e.strerror})") from None
    finally:
        if out is not None:
            out.abort()
        if os.path.exists(partial):
            os.unlink(partial)
        if bar is not None:
            bar.close()
        session.close()
    return written


def _run_batch(session, target, feed_dict, start, stop):
    try:
        return np.asarray(session.run(target, feed_dict))
    except (OpError, ValueError, TypeError) as e:
        raise cli.Failure(cli.EXIT_RUN, f"rows {start}..{stop - 1}: {cli.one_line(e)}") from None


def _write(out, result, target, start, stop):
    try:
        out.write(result)
    except NpyError:
        raise cli.Failure(cli.EXIT_RUN, f"rows {start}..{stop - 1}: output '{target.name}' is {result.dtype} "
                                        f"{format_shape(result.shape)}, but the first batch made rows of "
                                        f"{out.dtype} {format_shape(out.shape[1:])}") from None


def _converted(rows, tensor):
    """Rows of another dtype, converted by --feed's rule: only when no value changes."""
    try:
        return feeding.convert(rows, tensor, f"--input {tensor.op.name}")
    except feeding.FeedError as e:
        raise cli.Failure(cli.EXIT_USAGE, str(e)) from None


def _create_output(path, result, rows, batch_rows, target):
    if result.ndim == 0 or result.shape[0] != batch_rows:
        raise cli.Failure(cli.EXIT_USAGE, f"output '{target.name}' has shape {format_shape(result.shape)} for a "
                                          f"batch of {batch_rows} rows; batch needs one output row per input row")
    return NpyWriter(path, result.dtype, (rows,) + result.shape[1:])


def _progress_bar(rows):
    try:
        from tqdm import tqdm
    except ImportError:
        return None  # the bar is a nicety: tqdm comes with the optional "cli" dependencies
    return tqdm(total=rows, unit="rows", unit_scale=True, file=sys.stderr, dynamic_ncols=True, leave=False)
