"""import_meta_graph drops TF1's saver subgraph: the saver's ops, what depends on them and what only
they use. A .meta whose saver reads a long chain used by nothing else took seconds per few thousand
nodes (run_fuzz.py --surface meta found it as a hang); the work is now linear in the graph."""

import struct
import subprocess
import sys
from pathlib import Path

import pytest

from graphdef._proto import graph_pb2, meta_graph_pb2
from graphdef.wire import meta_graph

GRAPHRUN_MAIN = "import sys; from graphdef.graphrun.cli import main; sys.exit(main(sys.argv[1:]))"
SEED = Path(__file__).resolve().parents[2] / "fuzz" / "seeds" / "tf1_ref_variables.savedmodel"


def _graph(chain, shared_every):
    """A variable, a chain of `chain` Identity nodes ending in a RestoreV2's input, every
    `shared_every`-th link also read by the model's own output node."""
    graph_def = graph_pb2.GraphDef()
    graph_def.node.add(name="w", op="VariableV2")
    graph_def.node.add(name="c0", op="Const")
    for i in range(1, chain):
        graph_def.node.add(name=f"c{i}", op="Identity", input=[f"c{i - 1}"])
    graph_def.node.add(name="save/RestoreV2", op="RestoreV2", input=[f"c{chain - 1}", "^w"])
    graph_def.node.add(name="save/Assign", op="Assign", input=["w", "save/RestoreV2"])
    shared = [f"c{i}:0" for i in range(0, chain, shared_every)] if shared_every else []
    graph_def.node.add(name="y", op="AddN", input=["w"] + shared)
    return graph_def


def _reference(graph_def):
    """The saver's nodes as the definition says, by rescanning until nothing changes."""
    def sources(node):
        return [text.lstrip("^").split(":")[0] for text in node.input]
    users = {n.name: [m.name for m in graph_def.node if n.name in sources(m)] for n in graph_def.node}
    saver = set()
    stack = [n.name for n in graph_def.node if n.op in meta_graph.SAVER_OPS]
    while stack:
        name = stack.pop()
        if name not in saver:
            saver.add(name)
            stack.extend(users[name])
    nodes = {n.name: n for n in graph_def.node}
    changed = True
    while changed:
        changed = False
        for name in list(saver):
            for source in sources(nodes[name]):
                if source not in saver and users[source] and all(u in saver for u in users[source]):
                    saver.add(source)
                    changed = True
    return {n.name for n in graph_def.node} - saver


@pytest.mark.parametrize("shared_every", [0, 7, 1])
def test_the_saver_subgraph_is_what_only_the_saver_uses(shared_every):
    graph_def = _graph(200, shared_every)
    kept = {n.name for n in meta_graph.without_saver(graph_def).node}
    assert kept == _reference(graph_def)
    assert "w" in kept and "y" in kept and "save/RestoreV2" not in kept


def test_a_long_chain_only_the_saver_reads_is_dropped_in_linear_work(monkeypatch):
    calls = []
    real = meta_graph._producers

    def counted(node):
        calls.append(node.name)
        return real(node)

    monkeypatch.setattr(meta_graph, "_producers", counted)
    chain = 20_000
    kept = {n.name for n in meta_graph.without_saver(_graph(chain, 0)).node}
    assert kept == {"w", "y"}
    # each node's inputs are read a bounded number of times (was once per link per pass: ~chain^2)
    assert len(calls) <= 4 * (chain + 4), len(calls)


def _sections(blob):
    """fuzz/cc/sections.h's format: each part a 4-byte little-endian length, then its bytes."""
    parts, at = [], 0
    while at < len(blob):
        (size,) = struct.unpack_from("<I", blob, at)
        parts.append(blob[at + 4:at + 4 + size])
        at += 4 + size
    return parts


def _saved_model(folder, chain):
    """TensorFlow's TF1 SavedModel seed, its RestoreV2 waiting on a chain of `chain` NoOps."""
    proto, index, shard = _sections(SEED.read_bytes())
    model = meta_graph_pb2.SavedModel()
    model.ParseFromString(proto)
    graph_def = model.meta_graphs[0].graph_def
    if chain:
        graph_def.node.add(name="k0", op="NoOp")
        for i in range(1, chain):
            graph_def.node.add(name=f"k{i}", op="NoOp", input=[f"^k{i - 1}"])
        next(n for n in graph_def.node if n.op == "RestoreV2").input.append(f"^k{chain - 1}")
    (folder / "variables").mkdir(parents=True)
    (folder / "saved_model.pb").write_bytes(model.SerializeToString())
    (folder / "variables" / "variables.index").write_bytes(index)
    (folder / "variables" / "variables.data-00000-of-00001").write_bytes(shard)
    return folder


def _outputs(command, folder):
    proc = subprocess.run(command + [str(folder), "--random", "--shape", "x=2,3"], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_both_runtimes_load_a_saved_model_whose_saver_waits_on_a_long_chain(runner, tmp_path):
    plain = _saved_model(tmp_path / "plain", 0)
    chained = _saved_model(tmp_path / "chained", 20_000)
    graphrun = [sys.executable, "-c", GRAPHRUN_MAIN]
    expected = _outputs([str(runner)], plain)
    assert _outputs([str(runner)], chained) == expected
    assert _outputs(graphrun, chained) == _outputs(graphrun, plain) == expected
