"""Large graphs: a 100,000-node chain loads, inspects and runs in graphrun and graphrun-cc with
the right answer and within a memory bound.

The chain (x -> AddV2(., one) ... -> y) is the shape that found the super-linear walks: a
recursion over it would pass Python's recursion limit, and a pass that rescans its chain on
every step takes minutes. Each graphrun case runs in a child process, so that its peak RSS is
its own; how long each takes is benchmarks/bench_scale.py's business, not a test's.
"""

import json
import os
import subprocess
import sys

import pytest

from graphdef._proto import graph_pb2

NODES = 100_000
MAX_RSS_KB = 2 * 1024 * 1024  # 2 GiB
MAX_CC_RSS_KB = 512 * 1024    # graphrun-cc: about 1.4 KB a node, from about 10 KB before its fusion scratch was bounded
FLOAT = 1  # DT_FLOAT

pytestmark = pytest.mark.slow


def chain(n):
    """x, one, n-3 AddV2 nodes each adding one, y: y = x + n - 3."""
    graph_def = graph_pb2.GraphDef()
    x = graph_def.node.add(name="x", op="Placeholder")
    x.attr["dtype"].type = FLOAT
    x.attr["shape"].shape.SetInParent()
    one = graph_def.node.add(name="one", op="Const")
    one.attr["dtype"].type = FLOAT
    one.attr["value"].tensor.dtype = FLOAT
    one.attr["value"].tensor.tensor_shape.SetInParent()
    one.attr["value"].tensor.float_val.append(1.0)
    previous = "x"
    for i in range(n - 3):
        node = graph_def.node.add(name=f"add{i}", op="AddV2", input=[previous, "one"])
        node.attr["T"].type = FLOAT
        previous = node.name
    y = graph_def.node.add(name="y", op="Identity", input=[previous])
    y.attr["T"].type = FLOAT
    return graph_def


@pytest.fixture(scope="module")
def chain_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("scale") / "chain.pb"
    path.write_bytes(chain(NODES).SerializeToString())
    return path


# what each child runs: graphrun in process, then its own exit code, stdout, peak RSS and how
# often it did the per-node work that must stay once a node: a node built from the file
# (registry.create, which checks and infers its shapes) and the whole graph encoded again for
# the C++ core (cc_engine.graph_to_proto; the file's own GraphDef goes while nothing changed)
CHILD = """
import collections, contextlib, io, json, resource, sys
from graphdef.client import cc_engine
from graphdef.graphrun import cli
from graphdef.wire import serialize
calls = collections.Counter()
def counted(module, name):
    real = getattr(module, name)
    def call(*args, **kwargs):
        calls[name] += 1
        return real(*args, **kwargs)
    setattr(module, name, call)
counted(serialize, "create")
counted(cc_engine, "graph_to_proto")
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    code = cli.main(sys.argv[1:])
print(json.dumps({"code": code, "out": out.getvalue(), "err": err.getvalue(), "calls": calls,
                  "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def graphrun_child(*argv, env=None):
    """(stdout, {counted function: calls}) of graphrun in a child process."""
    done = subprocess.run([sys.executable, "-c", CHILD, *map(str, argv)], capture_output=True, text=True,
                          timeout=900, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["code"] == 0 and report["err"] == "", report["err"]
    assert report["rss_kb"] < MAX_RSS_KB, f"peak RSS {report['rss_kb']} KB"
    return report["out"], report["calls"]


def graphrun_cc(runner, *argv):
    """graphrun-cc under /usr/bin/time -f %M where it exists: (stdout, peak RSS in KB or None)."""
    timed = ["/usr/bin/time", "-f", "%M"] if os.access("/usr/bin/time", os.X_OK) else []
    done = subprocess.run([*timed, str(runner), *map(str, argv)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    rss = int(done.stderr.strip().splitlines()[-1]) if timed else None
    return done.stdout, rss


def expected_line():
    return f"y:0 float32 [] = {float(2 + NODES - 3)}\n"  # x = 2


@pytest.mark.parametrize("env", [{}, {"GRAPHDEF_OPTIMIZE": "0"}, {"GRAPHDEF_ENGINE": "python"},
                                 {"GRAPHDEF_ENGINE": "python", "GRAPHDEF_OPTIMIZE": "0"}],
                         ids=["default", "unoptimized", "numpy", "numpy-unoptimized"])
def test_graphrun_runs_a_long_chain(chain_file, env):
    out, calls = graphrun_child(chain_file, "--feed", "x=2", env={**os.environ, **env})
    assert out == expected_line()
    if env.get("GRAPHDEF_ENGINE") == "python" and "GRAPHDEF_OPTIMIZE" not in env:
        # the file's nodes once, then the optimized copy (the chain fused into a few nodes)
        assert NODES <= calls["create"] <= NODES + 100, calls
    else:
        assert calls["create"] == NODES, calls   # each node built once: no second import
    assert calls.get("graph_to_proto", 0) == 0, calls


def test_graphrun_inspects_a_long_chain(chain_file):
    out, calls = graphrun_child("inspect", chain_file, "--json")
    assert calls["create"] == NODES, calls
    report = json.loads(out)
    assert report["nodes"] == NODES and report["load_error"] is None, report.get("load_error")
    assert [i["name"] for i in report["inputs"]] == ["x"]
    assert [o["name"] for o in report["outputs"]] == ["y:0"]


def test_graphrun_cc_runs_and_inspects_a_long_chain(runner, chain_file):
    out, rss = graphrun_cc(runner, chain_file, "--feed", "x=2")
    assert out == expected_line()
    # the fused chain's scratch is bounded (at most 64 steps a node): no longer 8 KB a node
    assert rss is None or rss < MAX_CC_RSS_KB, rss
    out, rss = graphrun_cc(runner, "inspect", chain_file, "--json")
    report = json.loads(out)
    assert report["nodes"] == NODES
    optimized = report["optimize"]
    assert optimized["passes"][-1]["counts"] == {"elementwise ops fused": NODES - 3}, optimized
    assert NODES // 64 <= optimized["nodes_after"] <= NODES // 64 + 10, optimized
    assert rss is None or rss < MAX_CC_RSS_KB, rss
