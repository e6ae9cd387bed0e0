"""Function-call bombs: a few KB of functions that each call the next ten times, twenty deep, ask
for 10^20 calls, and a chain of functions can nest far past what a run allows. Both runtimes
count a file's calls through its call graph at load, with their multiplicity, and refuse one
whose calls nest more than 64 deep, or would make more than 10^6 calls or run more than 10^6
nodes in calls, in the same words, before anything runs. The libraries are built here; the
expected counts follow from their shape (fanout ** depth)."""

import pytest

from graphdef._proto import graph_pb2
from graphdef.wire import call_budget, serialize
from tests.support.cc_helpers import run_cc
from tests.support.graphrun_helpers import graphrun

INT32 = graph_pb2.DataType.DT_INT32


def call_node(container, name, callee, inputs):
    node = container.add(name=name, op="PartitionedCall", input=inputs)
    node.attr["Tin"].list.type.append(INT32)
    node.attr["Tout"].list.type.append(INT32)
    node.attr["f"].func.name = callee
    return node


def add_function(lib, name, fanout, callee, extra_nodes=0):
    """`name`(a) = the sum of `fanout` calls of `callee` on a (a itself when fanout is 0), plus
    `extra_nodes` Identity nodes it runs for nothing."""
    f = lib.function.add()
    f.signature.name = name
    f.signature.input_arg.add(name="a", type=INT32)
    f.signature.output_arg.add(name="b", type=INT32)
    for j in range(extra_nodes):
        f.node_def.add(name=f"pad{j}", op="Identity", input=["a"]).attr["T"].type = INT32
    if fanout == 0:
        f.node_def.add(name="id", op="Identity", input=["a"]).attr["T"].type = INT32
        f.ret["b"] = "id:output:0"
        return
    for j in range(fanout):
        call_node(f.node_def, f"c{j}", callee, ["a"])
    if fanout == 1:
        f.ret["b"] = "c0:output:0"
        return
    total = f.node_def.add(name="sum", op="AddN", input=[f"c{j}:output:0" for j in range(fanout)])
    total.attr["T"].type = INT32
    total.attr["N"].i = fanout
    f.ret["b"] = "sum:sum:0"


def model(depth, fanout, extra_nodes=0):
    """f0 .. f{depth}: f_i calls f_{i+1} `fanout` times; node 'call' calls f0 on placeholder x.
    One run makes sum(fanout ** k for k in 0..depth) calls, nested depth + 1 deep."""
    g = graph_pb2.GraphDef()
    for i in range(depth):
        add_function(g.library, f"f{i}", fanout, f"f{i + 1}", extra_nodes)
    add_function(g.library, f"f{depth}", 0, None, extra_nodes)
    x = g.node.add(name="x", op="Placeholder")
    x.attr["dtype"].type = INT32
    call_node(g.node, "call", "f0", ["x"])
    return g


def calls_of(depth, fanout):
    return sum(fanout ** k for k in range(depth + 1))


def both(runner, capsys, path):
    code, out, err = graphrun(capsys, path, "--feed", "x=1")
    cc_code, cc_out, cc_err = run_cc(runner, path, "--feed", "x=1", timeout=60)
    return (code, out, err.removeprefix("graphrun: ")), (cc_code, cc_out, cc_err.removeprefix("graphrun-cc: "))


def refused_alike(runner, capsys, tmp_path, graph, message):
    path = tmp_path / "model.pb"
    path.write_bytes(graph.SerializeToString())
    py, cc = both(runner, capsys, path)
    assert py == cc == (3, "", f"{path}: node 'call' (PartitionedCall): attr 'f' calls 'f0'{message}\n")


TOO_DEEP = ", whose calls nest more than 64 deep, the most a run allows"
TOO_MANY_CALLS = ": the graph's calls would run more than 1000000 function calls, the budget a file may ask for"
TOO_MANY_NODES = (": the graph's calls would run more than 1000000 nodes in function calls, "
                  "the budget a file may ask for")


def test_the_budget_is_what_the_docs_say():
    assert (call_budget.MAX_CALLS, call_budget.MAX_CALL_DEPTH) == (10 ** 6, 64)


def test_a_call_bomb_is_refused_before_it_runs(runner, tmp_path, capsys):
    graph = model(20, 10)  # 10 ** 20 calls
    assert graph.ByteSize() < 20000 and calls_of(20, 10) > 10 ** 20
    refused_alike(runner, capsys, tmp_path, graph, TOO_MANY_CALLS)


def test_calls_just_under_the_budget_run(runner, tmp_path, capsys):
    # 1 + 10 + ... + 10 ** 5 = 111111 calls, well under; each returns x * 10 ** 5 in the end
    path = tmp_path / "model.pb"
    path.write_bytes(model(5, 10).SerializeToString())
    py, cc = both(runner, capsys, path)
    assert py == cc == (0, "call:0 int32 [] = 100000\n", "")


def test_calls_just_over_the_budget_are_refused(runner, tmp_path, capsys):
    assert calls_of(6, 10) == 1111111  # the first fanout-10 library over 10 ** 6
    refused_alike(runner, capsys, tmp_path, model(6, 10), TOO_MANY_CALLS)


def test_nodes_run_by_calls_count_too(runner, tmp_path, capsys):
    # 111111 calls, each running 10 nodes for nothing: 1.2 million nodes
    refused_alike(runner, capsys, tmp_path, model(5, 10, extra_nodes=9), TOO_MANY_NODES)


@pytest.mark.parametrize("depth", [63, 64])
def test_call_chains_up_to_64_deep_run_and_one_deeper_is_refused(runner, tmp_path, capsys, depth):
    graph = model(depth, 1)  # depth + 1 nested calls
    if depth + 1 > 64:
        refused_alike(runner, capsys, tmp_path, graph, TOO_DEEP)
        return
    path = tmp_path / "model.pb"
    path.write_bytes(graph.SerializeToString())
    py, cc = both(runner, capsys, path)
    assert py == cc == (0, "call:0 int32 [] = 1\n", "")


def test_a_long_chain_is_refused_before_any_function_is_instantiated(runner, tmp_path, capsys, monkeypatch):
    # instantiating 100,001 functions, each a graph of its own, took many seconds before the
    # refusal: now the call graph alone decides, and instantiating anything fails this test
    path = tmp_path / "model.pb"
    path.write_bytes(model(100000, 1).SerializeToString())

    def instantiating(*args, **kwargs):
        raise AssertionError("a function was instantiated before the call budget was checked")

    monkeypatch.setattr(serialize, "attach_library", instantiating)
    monkeypatch.setattr(serialize, "check_calls", instantiating)
    code, out, err = graphrun(capsys, path, "--feed", "x=1")
    line = f"{path}: node 'call' (PartitionedCall): attr 'f' calls 'f0'{TOO_DEEP}\n"
    assert (code, out, err) == (3, "", "graphrun: " + line)
    assert run_cc(runner, path, "--feed", "x=1", timeout=60) == (3, "", "graphrun-cc: " + line)


def test_recursion_that_multiplies_is_refused(runner, tmp_path, capsys):
    # f calls itself twice: up to 2 ** 64 calls before the depth limit would stop it
    g = graph_pb2.GraphDef()
    add_function(g.library, "f0", 2, "f0")
    x = g.node.add(name="x", op="Placeholder")
    x.attr["dtype"].type = INT32
    call_node(g.node, "call", "f0", ["x"])
    refused_alike(runner, capsys, tmp_path, g, TOO_MANY_CALLS)


def test_many_calls_of_one_small_function_add_up(runner, tmp_path, capsys):
    # 495 nodes each calling f0, whose 10 calls of h run 201 nodes each: f0 runs 12 + 10 * 201 =
    # 2022 nodes, and the 495th call takes the total past 10 ** 6 (494 * 2022 is under it)
    g = graph_pb2.GraphDef()
    add_function(g.library, "f0", 10, "h", extra_nodes=1)
    add_function(g.library, "h", 0, None, extra_nodes=200)
    x = g.node.add(name="x", op="Placeholder")
    x.attr["dtype"].type = INT32
    for i in range(495):
        call_node(g.node, "call" if i == 494 else f"call{i}", "f0", ["x"])
    refused_alike(runner, capsys, tmp_path, g, TOO_MANY_NODES)
