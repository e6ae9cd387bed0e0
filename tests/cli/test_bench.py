"""graphrun bench: run counts, latency percentiles, throughput, and --profile's tables."""

import re

import pytest

import graphdef as tf
from graphdef.graphrun import bench
from tests.support.graphrun_helpers import CNN, MLP, fails, graphrun, json_line, ok, save_model

RANDOM_MLP = ["--random", "--shape", "x=64,16"]


def test_text_report(capsys):
    out = ok(capsys, "bench", MLP, *RANDOM_MLP, "--runs", "25", "--warmup", "3")
    lines = out.splitlines()
    assert lines[0] == f"bench {MLP}"
    assert lines[1] == "feeds: x float32 [64,16] random (seed 0)"
    assert re.fullmatch(r"load [\d.]+ ms, first run [\d.]+ ms, 3 warm-up runs, 25 timed runs in [\d.]+ s", lines[2])
    figures = dict(re.findall(r"(min|p50|p90|p99|mean|max) ([\d.]+)", lines[3]))
    assert lines[3].startswith("latency ms: ") and list(figures) == ["min", "p50", "p90", "p99", "mean", "max"]
    ms = {k: float(v) for k, v in figures.items()}
    assert 0 < ms["min"] <= ms["p50"] <= ms["p90"] <= ms["p99"] <= ms["max"]
    assert ms["min"] <= ms["mean"] <= ms["max"]
    assert re.fullmatch(r"throughput: [\d.]+ runs/s", lines[4]) and len(lines) == 5


def test_json_report_is_consistent(capsys):
    report = json_line(ok(capsys, "bench", MLP, *RANDOM_MLP, "--runs", "40", "--warmup", "0", "--json"))
    assert (report["runs"], report["warmup_runs"]) == (40, 0)
    assert report["engine"] == "cc"  # auto: the C++ core has every kernel the MLP needs
    lat = report["latency_seconds"]
    assert 0 < lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"]
    assert report["runs_per_second"] == pytest.approx(40 / (lat["mean"] * 40))
    assert report["first_run_seconds"] > 0 and report["load_seconds"] > 0 and "profile" not in report


def test_duration_bounds_the_runs(capsys):
    report = json_line(ok(capsys, "bench", MLP, *RANDOM_MLP, "--duration", "0.2", "--json"))
    assert report["runs"] >= 1
    assert report["runs"] * report["latency_seconds"]["mean"] <= 0.2 + report["latency_seconds"]["max"]


@pytest.mark.slow
def test_profile_tables(capsys):
    out = ok(capsys, "bench", CNN, "--random", "--shape", "x=16,8,8,1", "--runs", "20", "--profile", "--top", "3")
    lines = out.splitlines()
    start = lines.index("time per op type:")
    assert re.fullmatch(r"profile: 20 runs with a timer around every node, [\d.]+ ms per run in nodes",
                        lines[start - 1])
    assert lines[start + 1].split() == ["op", "type", "nodes", "ms/run", "share"]
    types = {row.split()[0]: row.split() for row in lines[start + 2:lines.index("slowest nodes (top 3):")]}
    # every op the plan runs, with its node count; Consts and the fed placeholder need no step
    assert {name: int(row[1]) for name, row in types.items()} == {
        "AddV2": 6, "MatMul": 4, "Mul": 3, "Relu": 3, "Reshape": 3, "Max": 2, "Sub": 2, "Exp": 1, "RealDiv": 1,
        "Sum": 1}
    shares = [float(row[3].rstrip("%")) for row in types.values()]
    assert sum(shares) == pytest.approx(100, abs=0.6) and shares == sorted(shares, reverse=True)
    slow = lines[lines.index("slowest nodes (top 3):") + 2:]
    assert len(slow) == 3 and all(row.split()[0] in {op.name for op in tf.load(CNN).get_operations()} for row in slow)


def test_profile_json(capsys):
    report = json_line(ok(capsys, "bench", MLP, *RANDOM_MLP, "--runs", "10", "--profile", "--json"))
    profile = report["profile"]
    assert profile["runs"] == 10
    assert sum(t["nodes"] for t in profile["op_types"]) == 9    # 3 MatMul, 3 AddV2, 2 Relu, 1 Sigmoid
    assert {n["node"] for n in profile["slowest_nodes"]} <= {op.name for op in tf.load(MLP).get_operations()}
    assert sum(t["seconds"] for t in profile["op_types"]) == pytest.approx(profile["seconds_per_run"])
    assert report["engine"] == "python"  # only the numpy engine times its nodes: the whole bench runs there


def test_engine_choice(capsys):
    assert json_line(ok(capsys, "bench", MLP, *RANDOM_MLP, "--runs", "3", "--engine", "python", "--json"))[
        "engine"] == "python"
    assert json_line(ok(capsys, "bench", MLP, *RANDOM_MLP, "--runs", "3", "--engine", "cc", "--json"))[
        "engine"] == "cc"
    fails(capsys, 2, "bench", MLP, *RANDOM_MLP, "--engine", "cc", "--profile", mentions=["--profile", "numpy"])


def test_profile_keeps_variables_and_results_right(tmp_path):
    """The profiled plan is the session's own: a variable read after its assignment still sees it."""
    from graphdef.graphrun.node_profile import profile
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(2.0, name="v")
        out = tf.multiply(v, 3.0, name="out")
        init = tf.global_variables_initializer()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        times = profile(sess, [out], {}, 5)
        assert [op.name for op, _ in times.per_node()] != [] and times.runs == 5
        assert {op.type for op in times.ops} == {"VariableV2", "Identity", "Mul"}  # v, v/read, out
        assert sess.run(out) == 6.0


def test_profile_times_a_step_that_could_not_work_in_place():
    """A donating step whose input is still viewed calls its kernel without out=: that call is
    timed too (every node's time is counted, none shows zero)."""
    import numpy as np
    from graphdef.graphrun.node_profile import profile
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [65536], name="x")
        doubled = tf.multiply(x, 2.0, name="doubled")
        tf.reshape(doubled, [256, 256], name="view")   # fetched first, so it runs first; it shares
        # doubled's memory, so tripled, the last reader of doubled, cannot write into it
        tripled = tf.multiply(doubled, 3.0, name="tripled")
        out = tf.multiply(tripled, 5.0, name="out")    # tripled is dead and unviewed: donated
    with tf.Session(graph=g) as sess:
        times = profile(sess, ["view:0", "out:0"], {x: np.ones(65536, np.float32)}, 5)
        seconds = {op.name: t for op, t in times.per_node()}
        assert set(seconds) == {"doubled", "view", "tripled", "out"}
        assert all(t > 0 for t in seconds.values()), seconds
        np.testing.assert_array_equal(sess.run(out, {x: np.ones(65536, np.float32)}), np.full(65536, 30, np.float32))


def test_nearest_rank_percentiles():
    ordered = list(range(1, 101))
    assert [bench.percentile(ordered, p) for p in (50, 90, 99, 100)] == [50, 90, 99, 100]
    assert bench.percentile([7], 99) == 7 and bench.percentile([1, 2, 3], 50) == 2


@pytest.mark.parametrize("argv, mentions", [
    ([], ["x (float32, [?,16])", "--random"]),
    (["--random"], ["--shape x=N,16"]),
    ([*RANDOM_MLP, "--runs", "0"], ["--runs"]),
    ([*RANDOM_MLP, "--runs", "5", "--duration", "1"], ["--duration"]),
    ([*RANDOM_MLP, "--duration", "0"], ["--duration"]),
    ([*RANDOM_MLP, "--warmup", "-1"], ["--warmup"]),
])
def test_usage_errors(capsys, argv, mentions):
    fails(capsys, 2, "bench", MLP, *argv, mentions=mentions)


def test_a_failing_graph_exits_4(capsys, tmp_path):
    path = save_model(tmp_path / "var.pb", lambda: tf.identity(tf.Variable([1.0], name="v"), name="out"))
    fails(capsys, 4, "bench", path, "--runs", "3", "--fetch", "out", mentions=["'v'", "not initialized"])


def test_help(capsys):
    code, out, _ = graphrun(capsys, "bench", "--help")
    assert code == 0 and "--profile" in out and "nearest-rank" in out and "exit codes:" in out
