"""Load, inspect and run time against node count: graphrun, graphrun-cc and TensorFlow's import.

    .venv/bin/python benchmarks/bench_scale.py            # 10^3 .. 10^5 nodes
    .venv/bin/python benchmarks/bench_scale.py --million  # 10^6 too (minutes)
    .venv/bin/python benchmarks/bench_scale.py --sizes 1000,20000 --shapes chain

Three shapes of GraphDef, each of N nodes: a chain (x -> AddV2(., one) ... -> y), a wide
fan-in (N-2 Identity nodes of x feeding one AddN) and a deep stack of calls (many small
functions, each calling the next, 32 deep, their stacks chained in the main graph). Each
part runs in a child process of its own so that its peak RSS is its own: `graphrun inspect`
and `graphrun run` in process (graphdef.graphrun.cli.main, timed from the call, so without
the interpreter's start), graphrun-cc's run and inspect (the whole process), and
tf.compat.v1.import_graph_def (timed from the parsed GraphDef). The table prints one row per
shape and size, with the ratios graphrun / graphrun-cc and graphrun / TensorFlow's import.
Target (issue 35): at 10^6 nodes graphrun runs within 10x graphrun-cc and no slower than
TensorFlow imports. A part that takes longer than --timeout seconds prints as "timeout".
"""

import argparse
import contextlib
import importlib.util
import io
import json
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from graphdef._native import executable_path  # noqa: E402

RUNNER = executable_path()  # $GRAPHRUN_CC, else the graphrun-cc this graphdef carries
SHAPES = ("chain", "fan_in", "calls")
CALL_DEPTH = 32  # calls nested in one stack, half of the depth a run allows
FLOAT = 1        # DT_FLOAT


# -- the models ---------------------------------------------------------------------------

def _placeholder(graph_def, name="x"):
    node = graph_def.node.add(name=name, op="Placeholder")
    node.attr["dtype"].type = FLOAT
    node.attr["shape"].shape.SetInParent()


def _const_one(nodes, name="one"):
    node = nodes.add(name=name, op="Const")
    node.attr["dtype"].type = FLOAT
    tensor = node.attr["value"].tensor
    tensor.dtype = FLOAT
    tensor.tensor_shape.SetInParent()
    tensor.float_val.append(1.0)


def _unary(nodes, name, op, source):
    node = nodes.add(name=name, op=op, input=[source])
    node.attr["T"].type = FLOAT
    return name


def chain(n):
    """x, one, n-3 AddV2 adding one, y: y = x + n - 3 (returned: y at x = 1)."""
    from graphdef._proto import graph_pb2
    graph_def = graph_pb2.GraphDef()
    _placeholder(graph_def)
    _const_one(graph_def.node)
    previous = "x"
    for i in range(n - 3):
        node = graph_def.node.add(name=f"add{i}", op="AddV2", input=[previous, "one"])
        node.attr["T"].type = FLOAT
        previous = node.name
    _unary(graph_def.node, "y", "Identity", previous)
    return graph_def, 1 + n - 3


def fan_in(n):
    """x, n-2 Identity nodes of x, one AddN of them all: y = (n - 2) * x."""
    from graphdef._proto import graph_pb2
    graph_def = graph_pb2.GraphDef()
    _placeholder(graph_def)
    names = [_unary(graph_def.node, f"id{i}", "Identity", "x") for i in range(n - 2)]
    node = graph_def.node.add(name="y", op="AddN", input=names)
    node.attr["T"].type = FLOAT
    node.attr["N"].i = len(names)
    return graph_def, n - 2


def calls(n):
    """Functions f0..fK, each x + 1 and, unless it starts a stack, a call of the one before
    (stacks CALL_DEPTH deep); the main graph calls each stack's top in a chain: y = x + K + 1
    (returned: y at x = 1).
    Each function holds three nodes (a call, a Const, an AddV2), so the file holds about n."""
    from graphdef._proto import graph_pb2
    graph_def = graph_pb2.GraphDef()
    _placeholder(graph_def)
    count = max(1, (n - 2) // 3)  # three nodes in each function, one call per stack in the main graph
    for i in range(count):
        fn = graph_def.library.function.add()
        fn.signature.name = f"f{i}"
        fn.signature.input_arg.add(name="a", type=FLOAT)
        fn.signature.output_arg.add(name="out", type=FLOAT)
        source = "a"
        if i % CALL_DEPTH:
            call = fn.node_def.add(name="inner", op="PartitionedCall", input=["a"])
            call.attr["f"].func.name = f"f{i - 1}"
            call.attr["Tin"].list.type.append(FLOAT)
            call.attr["Tout"].list.type.append(FLOAT)
            source = "inner:output:0"
        _const_one(fn.node_def)
        add = fn.node_def.add(name="add", op="AddV2", input=[source, "one:output:0"])
        add.attr["T"].type = FLOAT
        fn.ret["out"] = "add:z:0"
    previous = "x"
    tops = [i for i in range(count) if i % CALL_DEPTH == CALL_DEPTH - 1 or i == count - 1]
    for i in tops:
        call = graph_def.node.add(name=f"call{i}", op="PartitionedCall", input=[previous])
        call.attr["f"].func.name = f"f{i}"
        call.attr["Tin"].list.type.append(FLOAT)
        call.attr["Tout"].list.type.append(FLOAT)
        previous = call.name
    _unary(graph_def.node, "y", "Identity", previous)
    return graph_def, 1 + count


BUILDERS = {"chain": chain, "fan_in": fan_in, "calls": calls}


def node_count(graph_def):
    return len(graph_def.node) + sum(len(f.node_def) for f in graph_def.library.function)


# -- the parts, each in a child process ---------------------------------------------------

def part_graphrun(verb, path):
    from graphdef.graphrun import cli
    argv = [path, "--feed", "x=1"] if verb == "run" else ["inspect", path]
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    seconds = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"graphrun {verb} failed: {err.getvalue().strip()}")
    return seconds, out.getvalue()


def part_tensorflow(path):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    graph_def = tf.compat.v1.GraphDef()
    with open(path, "rb") as f:
        graph_def.ParseFromString(f.read())
    start = time.perf_counter()
    with tf.Graph().as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
    return time.perf_counter() - start, ""


def child_main(part, path):
    if part == "tf-import":
        seconds, out = part_tensorflow(path)
    else:
        seconds, out = part_graphrun(part.removeprefix("graphrun-"), path)
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "rss_kb": rss_kb, "out": out}))
    return 0


def run_child(command, timeout):
    """(wall seconds, stdout, stderr) of a child process; None past the timeout; ("failed", why)."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        return None
    seconds = time.perf_counter() - start
    if child.returncode != 0:
        lines = err.strip().splitlines()
        return "failed", lines[-1] if lines else f"exit {child.returncode}"
    return seconds, out, err


def measure(part, path, timeout):
    """(seconds, peak RSS in KB or None, stdout) of one part; None past the timeout; ("failed", why)."""
    if part.startswith("graphrun-cc"):
        verb = part.removeprefix("graphrun-cc-")
        argv = [str(RUNNER), path, "--feed", "x=1"] if verb == "run" else [str(RUNNER), "inspect", path]
        timed = os.path.exists("/usr/bin/time")
        result = run_child(["/usr/bin/time", "-f", "%M", *argv] if timed else argv, timeout)
        if result is None or result[0] == "failed":
            return result
        seconds, out, err = result
        return seconds, int(err.strip().splitlines()[-1]) if timed else None, out  # time's line: the peak
    result = run_child([sys.executable, __file__, "--part", part, path], timeout)
    if result is None or result[0] == "failed":
        return result
    report = json.loads(result[1].strip().splitlines()[-1])
    return report["seconds"], report["rss_kb"], report["out"]


PARTS = ("graphrun-inspect", "graphrun-run", "graphrun-cc-inspect", "graphrun-cc-run", "tf-import")


def cell(result):
    if result is None:
        return "timeout", ""
    if result[0] == "failed":
        return "failed", ""
    seconds, rss, _ = result
    return f"{seconds:8.2f}s", f"{rss / 1024:6.0f}M" if rss else ""


def ratio(a, b):
    if not a or not b or a[0] == "failed" or b[0] == "failed":
        return "   -"
    return f"{a[0] / b[0]:6.2f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--million", action="store_true", help="add 10^6 nodes (minutes per part)")
    parser.add_argument("--sizes", help="comma-separated node counts instead of 10^3..10^5")
    parser.add_argument("--shapes", default=",".join(SHAPES), help=f"of {', '.join(SHAPES)}")
    parser.add_argument("--timeout", type=float, default=600, help="seconds one part may take")
    parser.add_argument("--part", help=argparse.SUPPRESS)
    parser.add_argument("path", nargs="?", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.part:
        return child_main(args.part, args.path)

    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else [1000, 10_000, 100_000]
    if args.million:
        sizes.append(1_000_000)
    if importlib.util.find_spec("tensorflow"):  # not imported here: children would start with its pages
        parts = PARTS
    else:
        print("TensorFlow is not installed (make test installs it): its import is left out")
        parts = PARTS[:-1]
    if not RUNNER.exists():
        print(f"graphrun-cc: {RUNNER} is missing (run make setup): it is left out")
        parts = tuple(p for p in parts if not p.startswith("graphrun-cc"))

    print(f"{'shape':7s} {'nodes':>8s}  " + "  ".join(f"{p:>17s}" for p in parts)
          + "  run/cc-run  run/tf  inspect/cc-inspect")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes.split(","):
            for n in sizes:
                graph_def, answer = BUILDERS[shape](n)
                path = os.path.join(tmp, f"{shape}_{n}.pb")
                with open(path, "wb") as f:
                    f.write(graph_def.SerializeToString())
                nodes = node_count(graph_def)
                del graph_def
                results = {p: measure(p, path, args.timeout) for p in parts}
                for p in ("graphrun-run", "graphrun-cc-run"):
                    got = results.get(p)
                    if got and got[0] != "failed" and f"= {float(answer)}" not in got[2]:
                        results[p] = ("failed", f"wrong answer: {got[2].strip()}")
                cells = [cell(results[p]) for p in parts]
                row = "  ".join(f"{t:>10s} {m:>6s}" for t, m in cells)
                run, inspect = results.get("graphrun-run"), results.get("graphrun-inspect")
                print(f"{shape:7s} {nodes:8d}  {row}  {ratio(run, results.get('graphrun-cc-run')):>10s}"
                      f"  {ratio(run, results.get('tf-import')):>6s}"
                      f"  {ratio(inspect, results.get('graphrun-cc-inspect')):>18s}", flush=True)
                for p in parts:
                    if results[p] and results[p][0] == "failed":
                        print(f"  {p}: {results[p][1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
