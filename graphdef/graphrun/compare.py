"""graphrun compare: the same feeds through several engines, a table of differences, PASSED or FAILED.

The first engine is the reference. For every output and every other engine, an element
agrees when |value - reference| <= atol + rtol * |reference| (numpy.isclose's rule);
NaN agrees with NaN and an infinity with the same infinity at the same place, but by
default any NaN or Inf in any output fails the comparison (--allow-nonfinite accepts
them when the engines agree on them). A different dtype or shape, or an engine that
fails to run, fails it too. The last line starts with PASSED or FAILED, and the exit
code says the same (0 or 1), so the command can guard a CI job.
"""

import json
import sys

import numpy as np

from graphdef.graphrun import cli, feed_options
from graphdef.graphrun.engines import ENGINES, EngineError, EngineMissing, Job, run_engine
from graphdef.client.output_format import dtype_name, format_shape, format_value

DESCRIPTION = ("Run a GraphDef with the same feeds in several engines and check that their outputs "
               "agree within --atol/--rtol; ends with a PASSED or FAILED line.")

EPILOG = f"""\
engines:
  python      this package's Session on its numpy engine, the reference runtime
  cc          this package's Session on the C++ core, in process (libgraphrun.so, the library
              graphrun-cc is made of; $GRAPHDEF_LIBGRAPHRUN names another)
  tensorflow  tf.compat.v1.import_graph_def and a Session, when TensorFlow is installed

the check:
  The first engine is the reference. An element agrees when
  |value - reference| <= atol + rtol * |reference|. Per output and engine the table shows
  the largest absolute error, the largest relative error (|value - reference| / |reference|),
  and how many NaN and Inf values the output holds. Any NaN or Inf fails the check
  unless --allow-nonfinite (then they must sit at the same places in every engine).
  A dtype or shape mismatch, or an engine that fails, fails it too.

{feed_options.HELP}
{cli.FETCH_HELP}
exit codes:
  0    PASSED: every output agrees
  1    FAILED: an output differs, holds NaN/Inf, or an engine failed on the model
  2    usage or feed error, or an engine is not available (libgraphrun.so not built,
       TensorFlow not installed)
  3    the model cannot be read or is invalid (for this package's loader)
  130  interrupted
"""


def build_parser():
    parser = cli.verb_parser("compare", DESCRIPTION, EPILOG)
    parser.add_argument("--engines", default="python,cc", metavar="E1,E2,...",
                        help="engines to run, the first is the reference (default python,cc; "
                             "choices: " + ", ".join(ENGINES) + ")")
    parser.add_argument("--atol", type=_tolerance, default=1e-5, metavar="A", help="absolute tolerance (default 1e-5)")
    parser.add_argument("--rtol", type=_tolerance, default=1e-5, metavar="R", help="relative tolerance (default 1e-5)")
    parser.add_argument("--allow-nonfinite", action="store_true",
                        help="accept NaN/Inf where every engine has the same ones")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of the table")
    feed_options.add_arguments(parser)
    cli.add_optimize_argument(parser)
    cli.add_fetch_argument(parser)
    return parser


def _tolerance(text):
    value = float(text)
    if not value >= 0 or value == float("inf"):
        raise ValueError("not a finite non-negative number")
    return value


_tolerance.__name__ = "tolerance"


def main(args):
    engines = _engine_list(args.engines)
    prepared = cli.prepare(args)
    job = Job(args.model, prepared.graph, [t.name for t in prepared.targets],
              {t.op.name: v for t, v in prepared.fed.values.items()}, optimize=cli.optimize_switch(args))
    results = {}
    for name in engines:
        try:
            results[name] = run_engine(name, job)
        except EngineMissing as e:
            raise cli.Failure(cli.EXIT_USAGE, f"engine {name}: {e}") from None
        except EngineError as e:
            results[name] = e
    report = compare(job.fetches, engines, results, args.atol, args.rtol, args.allow_nonfinite)
    report["model"] = args.model
    report["feeds"] = prepared.fed.describe()
    text = json.dumps(_json_safe(report)) + "\n" if args.json else format_report(report)
    sys.stdout.write(text)
    sys.stdout.flush()
    return cli.EXIT_OK if report["passed"] else cli.EXIT_DIFFERENT


def _engine_list(text):
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in ENGINES]
    if unknown:
        raise cli.Failure(cli.EXIT_USAGE, f"--engines: unknown engine {unknown[0]!r}; choose from {', '.join(ENGINES)}")
    if len(names) < 2 or len(set(names)) != len(names):
        raise cli.Failure(cli.EXIT_USAGE, f"--engines: give two or more different engines, got {text!r}")
    return names


# -- the comparison -----------------------------------------------------------------------

def compare(fetches, engines, results, atol, rtol, allow_nonfinite=False):
    """The report: one row per (output, engine), the engines' times and failures, and the verdict.

    `results` maps engine name -> (values, seconds) or the EngineError it raised.
    """
    reference = engines[0]
    failures = {name: str(r) for name, r in results.items() if isinstance(r, EngineError)}
    rows = []
    for k, fetch in enumerate(fetches):
        ref = None if reference in failures else np.asarray(results[reference][0][k])
        for name in engines:
            if name in failures:
                continue
            value = np.asarray(results[name][0][k])
            row = _describe(fetch, name, value)
            if name == reference:
                problem = _nonfinite_problem(row, allow_nonfinite)
                result = "reference" if problem is None else "NaN/Inf"
            elif ref is None:
                problem, result = None, "-"
            else:
                problem = _check(row, value, ref, atol, rtol)
                result = "DIFFERS" if problem else "ok"
                if problem is None:
                    problem = _nonfinite_problem(row, allow_nonfinite)
                    result = "ok" if problem is None else "NaN/Inf"
            row["result"] = result
            if problem:
                row["problem"] = problem
            rows.append(row)
    problems = [f"{name} failed: {msg}" for name, msg in failures.items()]
    problems += [f"{r['output']} in {r['engine']}: {r['problem']}" for r in rows if r.get("problem")]
    return {
        "engines": engines,
        "atol": atol,
        "rtol": rtol,
        "seconds": {name: r[1] for name, r in results.items() if not isinstance(r, EngineError)},
        "rows": rows,
        "failures": failures,
        "problems": problems,
        "passed": not problems,
    }


def _describe(fetch, engine, value):
    row = {"output": fetch, "engine": engine, "dtype": dtype_name(value), "shape": list(value.shape),
           "max_abs_err": None, "max_rel_err": None, "nan": 0, "inf": 0}
    if value.dtype.kind == "f":
        row["nan"] = int(np.isnan(value).sum())
        row["inf"] = int(np.isinf(value).sum())
    return row


def _nonfinite_problem(row, allow_nonfinite):
    if allow_nonfinite or not (row["nan"] or row["inf"]):
        return None
    return f"holds {row['nan']} NaN and {row['inf']} Inf values"


def _check(row, value, ref, atol, rtol):
    """Fills the error columns; returns why `value` does not agree with `ref`, or None."""
    if value.dtype != ref.dtype:
        return f"dtype {dtype_name(value)}, the reference has {dtype_name(ref)}"
    if value.shape != ref.shape:
        return f"shape {format_shape(value.shape)}, the reference has {format_shape(ref.shape)}"
    abs_err, rel_err, agree = errors(value, ref, atol, rtol)
    row["max_abs_err"], row["max_rel_err"] = abs_err, rel_err
    if not agree.all():
        bad = int((~agree).sum())
        first = np.unravel_index(int(np.flatnonzero(~agree.reshape(-1))[0]), value.shape)
        return (f"{bad} of {value.size} elements differ beyond atol {atol:g} + rtol {rtol:g} * |reference|, "
                f"first at {list(map(int, first))}: {_element(value[first])} vs {_element(ref[first])}")
    return None


def _element(x):
    return format_value(np.asarray(x))


def errors(value, ref, atol, rtol):
    """(max absolute error, max relative error, elementwise agreement) of value against ref.

    Computed in float64 (ints and bools too). Equal non-finite values (NaN and NaN, inf and
    inf) count as no error; any other difference involving one is an infinite error.
    """
    a = value.astype(np.float64)
    b = ref.astype(np.float64)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        diff = np.where(same, 0.0, np.abs(a - b))
        diff = np.where(np.isnan(diff), np.inf, diff)
        rel = np.where(diff == 0, 0.0, diff / np.abs(b))
        rel = np.where(np.isnan(rel), np.inf, rel)
        agree = same | (np.isfinite(diff) & (diff <= atol + rtol * np.abs(b)))  # an inf reference allows no inf error
    if a.size == 0:
        return 0.0, 0.0, agree
    return float(diff.max()), float(rel.max()), agree


# -- the report ---------------------------------------------------------------------------

def _number(x):
    return "-" if x is None else f"{x:.3g}"


def format_report(report):
    engines = report["engines"]
    lines = [f"compare {report['model']}: {engines[0]} (reference) vs {', '.join(engines[1:])}; "
             f"atol {report['atol']:g}, rtol {report['rtol']:g}",
             f"feeds: {report['feeds']}"]
    seconds = report["seconds"]
    times = ", ".join(f"{name} {seconds[name] * 1000:.1f} ms" for name in engines if name in seconds)
    if times:
        notes = [note for name, note in (("cc", "cc includes loading the graph"),
                                         ("tensorflow", "tensorflow its import")) if name in report["seconds"]]
        lines.append(f"time: {times}" + (f" ({', '.join(notes)})" if notes else ""))
    header = ["output", "engine", "dtype", "shape", "max abs err", "max rel err", "nan", "inf", "result"]
    table = [header] + [[r["output"], r["engine"], r["dtype"], format_shape(r["shape"]), _number(r["max_abs_err"]),
                         _number(r["max_rel_err"]), str(r["nan"]), str(r["inf"]), r["result"]] for r in report["rows"]]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
    for problem in report["problems"]:
        lines.append(f"- {problem}")
    n = len({r["output"] for r in report["rows"]}) if report["rows"] else 0
    if report["passed"]:
        agree = "output agrees" if n == 1 else "outputs agree"
        lines.append(f"PASSED: {n} {agree} across {', '.join(engines)}")
    else:
        count = len(report["problems"])
        lines.append(f"FAILED: {count} problem{'s' if count != 1 else ''} (listed above)")
    return "".join(line + "\n" for line in lines)


def _json_safe(value):
    """The report with non-finite floats as the strings graphrun's --json uses for them."""
    if isinstance(value, float) and not np.isfinite(value):
        return "nan" if np.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value
