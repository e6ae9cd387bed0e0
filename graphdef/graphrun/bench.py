"""graphrun bench: how fast a model runs here, after warm-up, as percentiles and throughput.

One Session runs the same fetches with the same feeds over and over, as a serving loop
would, on the engine --engine names (by default auto: the C++ core where it has every
kernel). The first run (which also plans the execution) is reported on its own, then come
--warmup untimed runs, then the timed runs: --runs N, or as many as fit in --duration S;
by default up to 1000 runs or 5 seconds, whichever ends first. Percentiles use the
nearest-rank rule (the ceil(p/100 * n)-th smallest latency). --profile then repeats the
timed runs with a timer around every node and prints the time per op type and the
slowest nodes; the latency figures come from the runs without timers. Only the numpy engine
can time its nodes, so --profile runs the whole bench on it.
"""

import json
import math
import sys
import time

from graphdef.graphrun import cli, feed_options
from graphdef.framework.errors import OpError
from graphdef.client.runtime import ENGINES
from graphdef.client.session import Session, optimization_report, plan_engine
from graphdef.graphrun.inspect_model import optimized_line

DEFAULT_RUNS = 1000
DEFAULT_SECONDS = 5.0

DESCRIPTION = "Measure a GraphDef's latency (min, p50, p90, p99) and throughput; --profile per op type and node."

EPILOG = f"""\
runs:
  first run (it also plans the execution), then --warmup untimed runs, then timed runs:
  --runs N exactly, or as many as fit in --duration S; by default up to
  {DEFAULT_RUNS} runs or {DEFAULT_SECONDS:g} s, whichever ends first. Percentiles are nearest-rank.
  Feeds are made once and reused; give --random (with --shape for unknown dims) to
  bench without data.

output:
  the model and feeds, run counts, latency in ms (min, p50, p90, p99, mean, max) and
  throughput in runs/s; --profile adds a table of time per op type and the --top
  slowest nodes (mean ms per run, share of the profiled total), after a line saying
  what the load-time passes changed, if anything (the nodes profiled are the optimized graph's;
  --no-optimize runs the graph as written). --json prints one JSON document with the
  same figures in seconds.

{feed_options.HELP}
{cli.FETCH_HELP}
{cli.EXIT_CODES}"""


def build_parser():
    parser = cli.verb_parser("bench", DESCRIPTION, EPILOG)
    parser.add_argument("--warmup", type=_count, default=10, metavar="N", help="untimed runs first (default 10)")
    stop = parser.add_mutually_exclusive_group()
    stop.add_argument("--runs", type=_positive, metavar="N", help="exactly N timed runs")
    stop.add_argument("--duration", type=_seconds, metavar="S", help="timed runs for S seconds")
    parser.add_argument("--engine", choices=ENGINES,
                        help="the Session's engine (default auto; python with --profile)")
    parser.add_argument("--profile", action="store_true",
                        help="time every node on the numpy engine; print per op type and slowest nodes")
    parser.add_argument("--top", type=_positive, default=10, metavar="K", help="slowest nodes to list (default 10)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    feed_options.add_arguments(parser)
    cli.add_optimize_argument(parser)
    cli.add_fetch_argument(parser)
    return parser


def _count(text):
    value = int(text)
    if value < 0:
        raise ValueError("negative")
    return value


def _positive(text):
    value = int(text)
    if value < 1:
        raise ValueError("not positive")
    return value


def _seconds(text):
    value = float(text)
    if not 0 < value < math.inf:
        raise ValueError("not a positive number of seconds")
    return value


_count.__name__, _positive.__name__, _seconds.__name__ = "count", "positive count", "duration"


def main(args):
    started = time.perf_counter()
    prepared = cli.prepare(args)
    load_seconds = time.perf_counter() - started
    fetches, feed_dict = list(prepared.targets), prepared.fed.values
    engine = args.engine or ("python" if args.profile else None)
    if args.profile and engine != "python":
        raise cli.Failure(cli.EXIT_USAGE, "--profile times the nodes of the numpy engine: leave --engine out, "
                                          "or give --engine python")
    session = Session(graph=prepared.graph, engine=engine, optimize=cli.optimize_switch(args))
    try:
        first = _timed_run(session, fetches, feed_dict)
        ran_on = plan_engine(session, fetches, feed_dict)
        for _ in range(args.warmup):
            session.run(fetches, feed_dict)
        latencies = measure(lambda: session.run(fetches, feed_dict), args.runs, args.duration)
        node_times = optimized = None
        if args.profile:
            from graphdef.graphrun.node_profile import profile
            node_times = profile(session, fetches, feed_dict, len(latencies))
            optimized = optimization_report(session, fetches, feed_dict)
    except OpError as e:
        raise cli.Failure(cli.EXIT_RUN, cli.one_line(e)) from None
    finally:
        session.close()
    report = {
        "model": args.model,
        "feeds": prepared.fed.describe(),
        "engine": ran_on,
        "load_seconds": load_seconds,
        "first_run_seconds": first,
        "warmup_runs": args.warmup,
        "runs": len(latencies),
        "latency_seconds": stats(latencies),
        "runs_per_second": len(latencies) / sum(latencies) if sum(latencies) > 0 else math.inf,
    }
    if node_times is not None:
        report["profile"] = _profile_report(node_times, args.top)
        if optimized is not None:  # the nodes profiled are those of the optimized graph
            report["profile"]["optimized"] = optimized.as_dict()
    text = json.dumps(report) + "\n" if args.json else format_report(report)
    sys.stdout.write(text)
    sys.stdout.flush()
    return cli.EXIT_OK


def _timed_run(session, fetches, feed_dict):
    start = time.perf_counter()
    session.run(fetches, feed_dict)
    return time.perf_counter() - start


def measure(run, runs=None, duration=None):
    """Seconds of each call of run(): `runs` calls, or calls for `duration` s (default: the limits above)."""
    limit_runs = runs or (None if duration else DEFAULT_RUNS)
    limit_seconds = None if runs else (duration or DEFAULT_SECONDS)
    clock = time.perf_counter
    latencies = []
    start = clock()
    while True:
        before = clock()
        run()
        after = clock()
        latencies.append(after - before)
        if limit_runs is not None and len(latencies) >= limit_runs:
            break
        if limit_seconds is not None and after - start >= limit_seconds:
            break
    return latencies


def percentile(ordered, p):
    """Nearest rank: the ceil(p/100 * n)-th smallest of `ordered` (sorted, non-empty)."""
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def stats(latencies):
    ordered = sorted(latencies)
    return {"min": ordered[0], "p50": percentile(ordered, 50), "p90": percentile(ordered, 90),
            "p99": percentile(ordered, 99), "mean": sum(ordered) / len(ordered), "max": ordered[-1]}


def _profile_report(node_times, top):
    total = node_times.total()
    share = (lambda s: s / total) if total > 0 else (lambda s: 0.0)
    return {
        "runs": node_times.runs,
        "seconds_per_run": total,
        "op_types": [{"op": name, "nodes": count, "seconds": s, "share": share(s)}
                     for name, count, s in node_times.per_type()],
        "slowest_nodes": [{"node": op.name, "op": op.type, "seconds": s, "share": share(s)}
                          for op, s in node_times.per_node()[:top]],
    }


# -- the text form ------------------------------------------------------------------------

def _ms(seconds):
    return f"{seconds * 1000:.3f}"


def _columns(rows):
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def format_report(r):
    lat = r["latency_seconds"]
    lines = [
        f"bench {r['model']}",
        f"feeds: {r['feeds']}",
        f"load {_ms(r['load_seconds'])} ms, first run {_ms(r['first_run_seconds'])} ms, "
        f"{r['warmup_runs']} warm-up runs, {r['runs']} timed runs in {sum_seconds(r):.3f} s",
        "latency ms: " + "  ".join(f"{k} {_ms(lat[k])}" for k in ("min", "p50", "p90", "p99", "mean", "max")),
        f"throughput: {r['runs_per_second']:.1f} runs/s",
    ]
    profile = r.get("profile")
    if profile:
        if "optimized" in profile:  # the nodes profiled are the optimized graph's
            lines.append("optimized at load: " + optimized_line(profile["optimized"]))
        lines.append(f"profile: {profile['runs']} runs with a timer around every node, "
                     f"{_ms(profile['seconds_per_run'])} ms per run in nodes")
        lines.append("time per op type:")
        lines += _columns([["op type", "nodes", "ms/run", "share"]] + [
            [t["op"], str(t["nodes"]), _ms(t["seconds"]), f"{t['share'] * 100:.1f}%"] for t in profile["op_types"]])
        lines.append(f"slowest nodes (top {len(profile['slowest_nodes'])}):")
        lines += _columns([["node", "op type", "ms/run", "share"]] + [
            [n["node"], n["op"], _ms(n["seconds"]), f"{n['share'] * 100:.1f}%"] for n in profile["slowest_nodes"]])
    return "".join(line + "\n" for line in lines)


def sum_seconds(r):
    return r["runs"] / r["runs_per_second"] if r["runs_per_second"] else 0.0
