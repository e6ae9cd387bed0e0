"""TensorFlow's own graphs run here: every runtime reproduces TensorFlow's outputs on its frozen files.

tests/tf_models/ holds graphs TensorFlow built, trained and froze (its generator needs
TensorFlow; the committed files do not), with feeds and TensorFlow's outputs in the
conformance case format, so tests/conformance/replay.py judges them: dtype and shape
exactly, float32 values within 1e-5 relative or 1e-6 absolute.

Where a runtime lacks an op a model needs, that (runtime, model) is a strict xfail naming
the ops, and the refusal itself is tested: before running anything, one line listing
every missing op type, exit code 3. A separate test keeps the lists of missing ops equal
to what the runtimes really lack, so each entry goes as soon as its kernels land.
"""

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import graphdef
from graphdef._proto import graph_pb2
from graphdef.graph_util import extract_sub_graph
from graphdef.ops import REGISTRY
from graphdef.ops.cc_pending import cc_pending
from graphdef.wire.serialize import load
from tests.support.cc_helpers import listed_kernels, run_cc
from tests.conformance import replay
from tests.conformance.replay import cli_args, parse_json_outputs
from tests.support.graphrun_helpers import run_graphrun
from tests.support.tf_capabilities import why_tensorflow_cannot_run

REPO = Path(__file__).resolve().parents[2]
MODELS_DIR = REPO / "tests" / "tf_models"
MODEL_DIRS = sorted(p for p in MODELS_DIR.iterdir() if (p / "case.json").is_file())
MODEL_NAMES = [p.name for p in MODEL_DIRS]
REGENERATE = ".venv/bin/python -m tests.tf_models.generate"
EXIT_MODEL = 3

# The op types each model needs that a runtime has no kernel for. The Python Session and
# graphrun share graphdef's op registry; the C++ runner has its own kernels. Each entry makes
# that (runtime, model) a strict xfail and a refusal test; test_missing_op_lists_are_current
# fails as soon as an entry no longer says exactly what is missing, so update or drop it then.
REGISTRY_LACKS = {}
CC_LACKS = {}
LACKS = {"python": REGISTRY_LACKS, "graphrun": REGISTRY_LACKS, "graphrun-cc": CC_LACKS}
WHO = {"python": "graphdef's op registry", "graphrun": "graphdef's op registry", "graphrun-cc": "graphrun-cc"}


def models_for(runtime):
    params = []
    for name in MODEL_NAMES:
        missing = LACKS[runtime].get(name)
        marks = [pytest.mark.xfail(strict=True, reason=f"{WHO[runtime]} has no kernel for {', '.join(missing)}")
                 ] if missing else []
        params.append(pytest.param(name, id=name, marks=marks))
    return params


def case_of(name):
    return replay.load(MODELS_DIR / name)


def spec_of(name):
    return json.loads((MODELS_DIR / name / "case.json").read_text())


def file_census(path):
    graph_def = graph_pb2.GraphDef.FromString(Path(path).read_bytes())
    return Counter(node.op for node in graph_def.node)


@pytest.fixture(scope="session")
def cc_kernels(cc_runner):
    return listed_kernels(cc_runner)


# -- the committed files ----------------------------------------------------------------------

def test_the_issue_models_are_committed():
    required = {"mlp", "cnn", "cnn_batchnorm", "keras_cnn", "zoo"}
    assert required <= set(MODEL_NAMES), (f"missing TensorFlow-made models {sorted(required - set(MODEL_NAMES))} "
                                          f"in {MODELS_DIR.relative_to(REPO)}; write them with `{REGENERATE}`")


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_case_files_describe_the_model(name):
    """case.json's op census is the file's, and each feed fits a placeholder of the file."""
    spec = spec_of(name)
    model = MODELS_DIR / name / "model.pb"
    assert dict(file_census(model)) == spec["ops"], f"{name}: case.json's census is stale; run `{REGENERATE}`"
    graph_def = graph_pb2.GraphDef.FromString(model.read_bytes())
    nodes = {node.name: node for node in graph_def.node}
    for feed, value in case_of(name).feeds.items():
        node = nodes.get(feed)
        assert node is not None and node.op in ("Placeholder", "PlaceholderWithDefault"), \
            f"{name}: feed '{feed}' is not a placeholder of model.pb"
        assert graphdef.as_dtype(node.attr["dtype"].type).np == value.dtype, \
            f"{name}: feed '{feed}' is {value.dtype}, the placeholder {graphdef.as_dtype(node.attr['dtype'].type)}"
    size = sum(f.stat().st_size for f in (MODELS_DIR / name).iterdir())
    assert size < 256 * 1024, f"{name}: {size} bytes; keep the committed models small"


def test_the_models_cover_the_registry():
    """Every op an inference graph can hold appears in a TensorFlow-made file: the zoo here, or a
    real model of tests/real_models/ (control flow, attention, detection, in their functions too).

    Stateful ops (variables and their updates) cannot survive freezing, so they are exempt. So are
    the ops graphrun-cc has no kernel for yet (graphdef.ops.cc_pending): the zoo runs every model in
    every runtime, and they join it with their kernels; until then tests/python/ops34 and
    tests/python/strings run TensorFlow-built graphs of them in the Python runtimes.
    A new op in the registry fails this until it joins the zoo in tests/tf_models/zoo.py.
    """
    seen = set()
    for name in MODEL_NAMES:
        seen.update(spec_of(name)["ops"])
    for path in (REPO / "tests" / "real_models").glob("*/model.pb"):
        graph_def = graph_pb2.GraphDef.FromString(path.read_bytes())
        seen.update(node.op for node in graph_def.node)
        seen.update(node.op for function in graph_def.library.function for node in function.node_def)
    pending = cc_pending()
    missing = sorted(op for op, opdef in REGISTRY.items() if not opdef.stateful and op not in seen | pending)
    assert not missing, (f"registry ops no TensorFlow-made model holds: {', '.join(missing)}; add them to "
                         f"build_zoo in tests/tf_models/zoo.py and run `{REGENERATE}`")


def test_missing_op_lists_are_current_for_the_registry():
    actual = {name: tuple(sorted(op for op in spec_of(name)["ops"] if op not in REGISTRY)) for name in MODEL_NAMES}
    actual = {name: ops for name, ops in actual.items() if ops}
    assert actual == REGISTRY_LACKS, f"set REGISTRY_LACKS in {Path(__file__).name} to {actual}"


def test_missing_op_lists_are_current_for_the_cc_runner(cc_kernels):
    actual = {name: tuple(sorted(op for op in spec_of(name)["ops"] if op not in cc_kernels)) for name in MODEL_NAMES}
    actual = {name: ops for name, ops in actual.items() if ops}
    assert actual == CC_LACKS, f"set CC_LACKS in {Path(__file__).name} to {actual}"


# -- each runtime reproduces TensorFlow ---------------------------------------------------------

@pytest.mark.parametrize("name", models_for("python"))
def test_python_session(name):
    case = case_of(name)
    with graphdef.Session(graph=load(case.model)) as sess:
        values = sess.run(case.fetches, {f"{feed}:0": value for feed, value in case.feeds.items()})
    replay.check_outputs("Python Session", case, [np.asarray(v) for v in values])


@pytest.mark.parametrize("name", models_for("graphrun"))
def test_graphrun(name):
    case = case_of(name)
    code, stdout, stderr = run_graphrun(*cli_args(case))
    assert code == 0, f"graphrun on {name} exited {code}: {stderr.strip()}"
    replay.check_outputs("graphrun", case, parse_json_outputs("graphrun", case, stdout))


@pytest.mark.parametrize("name", models_for("graphrun-cc"))
def test_graphrun_cc(name, cc_runner):
    case = case_of(name)
    code, stdout, stderr = run_cc(cc_runner, *cli_args(case))
    assert code == 0, f"graphrun-cc on {name} exited {code}: {stderr.strip()}"
    replay.check_outputs("graphrun-cc", case, parse_json_outputs("graphrun-cc", case, stdout))


def test_graphrun_cc_on_every_zoo_output_it_has_kernels_for(cc_runner, cc_kernels, tmp_path):
    """Until the C++ runner runs the whole zoo, the outputs whose ancestors it can run are checked.

    Each zoo output is cut out with its ancestors; those made only of op types the runner
    has kernels for run together in one file. The set grows by itself as kernels land.
    """
    case = case_of("zoo")
    zoo = graph_pb2.GraphDef.FromString(case.model.read_bytes())
    runnable = [(fetch, expected) for fetch, expected in zip(case.fetches, case.expected)
                if {n.op for n in extract_sub_graph(zoo, [fetch.split(":")[0]]).node} <= cc_kernels]
    assert len(runnable) >= 60, f"only {len(runnable)} zoo outputs runnable by graphrun-cc"
    fetches = [fetch for fetch, _ in runnable]
    fragment = extract_sub_graph(zoo, [fetch.split(":")[0] for fetch in fetches])
    model = tmp_path / "zoo_fragment.pb"
    model.write_bytes(fragment.SerializeToString(deterministic=True))
    placeholders = {n.name for n in fragment.node if n.op == "Placeholder"}
    args = [str(model)]
    for feed, path in case.feed_files.items():
        if feed in placeholders:
            args += ["--feed", f"{feed}=@{path}"]
    for fetch in fetches:
        args += ["--fetch", fetch]
    code, stdout, stderr = run_cc(cc_runner, *args, "--json")
    assert code == 0, f"graphrun-cc on the zoo fragment exited {code}: {stderr.strip()}"
    partial = replay.CaseFiles(name="zoo (graphrun-cc's part)", directory=tmp_path, description=case.description,
                               feeds={}, feed_files={}, fetches=fetches, expected=[e for _, e in runnable],
                               tolerances=[t for (f, t) in zip(case.fetches, case.tolerances) if f in fetches],
                               skip={})
    replay.check_outputs("graphrun-cc", partial, parse_json_outputs("graphrun-cc", partial, stdout))


# -- refusals: one line naming what is wrong, before anything runs --------------------------------

def listed_op_types(line):
    """The op types of a "... no kernel for A (node), B (node and 2 more)" line, in order."""
    _, found, rest = line.partition("no kernel for ")
    assert found, f"the refusal does not say 'no kernel for': {line!r}"
    return re.findall(r"(?:^|, )([A-Za-z0-9_]+) \(", rest)


def refusal(runtime, request, args):
    if runtime == "graphrun":
        return run_graphrun(*args)
    return run_cc(request.getfixturevalue("cc_runner"), *args)


def assert_one_line_refusal(runtime, code, stdout, stderr, what):
    lines = stderr.splitlines()
    assert code == EXIT_MODEL, f"{runtime} on {what} exited {code}, expected {EXIT_MODEL}: {stderr.strip()}"
    assert stdout == "", f"{runtime} on {what} printed results before refusing: {stdout[:200]!r}"
    assert len(lines) == 1, f"{runtime} on {what}: {len(lines)} lines on stderr, expected one: {stderr!r}"
    assert lines[0].startswith(f"{runtime}: "), f"{runtime} on {what}: the line does not start with its name"
    return lines[0]


# Every TensorFlow-made model runs everywhere today, so the refusal is shown on one with two of
# its op types renamed to ones no runtime has (one of them on several nodes).
RENAMED = {"Conv2D": "FusedConv2DWithBias", "MaxPool": "MaxPoolWithArgmax"}


def renamed_cnn(tmp_path):
    graph_def = graph_pb2.GraphDef.FromString((MODELS_DIR / "cnn" / "model.pb").read_bytes())
    renamed = 0
    for node in graph_def.node:
        if node.op in RENAMED:
            node.op = RENAMED[node.op]
            renamed += 1
    assert renamed >= 3, "the cnn model should hold several Conv2D and MaxPool nodes"
    path = tmp_path / "renamed.pb"
    path.write_bytes(graph_def.SerializeToString(deterministic=True))
    return path


@pytest.mark.parametrize("runtime", ["graphrun", "graphrun-cc"])
def test_missing_ops_are_refused_all_at_once(runtime, request, tmp_path):
    """Every missing op type is named (each once), with no output and exit code 3."""
    path = renamed_cnn(tmp_path)
    case = case_of("cnn")
    args = [str(path)] + cli_args(case)[1:]
    code, stdout, stderr = refusal(runtime, request, args)
    line = assert_one_line_refusal(runtime, code, stdout, stderr, "renamed cnn")
    listed = listed_op_types(line)
    assert sorted(listed) == sorted(set(listed)), f"{runtime} names an op type twice: {line}"
    assert set(listed) == set(RENAMED.values()), f"{runtime} lists {sorted(listed)}: {line}"
    assert str(path) in line, f"{runtime} does not name the file: {line}"


def test_running_a_model_with_missing_ops_names_them_all(tmp_path):
    """The file loads (it is well-formed); the run that needs the missing ops names them all."""
    graph = load(renamed_cnn(tmp_path))
    case = case_of("cnn")
    with graphdef.Session(graph=graph) as sess, pytest.raises(graphdef.errors.UnimplementedError) as error:
        sess.run(case.fetches, {f"{feed}:0": value for feed, value in case.feeds.items()})
    assert set(listed_op_types(str(error.value))) == set(RENAMED.values()), str(error.value)


def zoo_fragment(tmp_path, corrupt):
    """A small TensorFlow-made graph every runtime supports (from the zoo), corrupted by `corrupt`.

    x, y -> add (AddV2) -> out/add_v2 and x, w -> MatMul (transpose_b) -> out/matmul_tb.
    """
    zoo = graph_pb2.GraphDef.FromString((MODELS_DIR / "zoo" / "model.pb").read_bytes())
    fragment = extract_sub_graph(zoo, ["out/add_v2", "out/matmul_tb"])
    corrupt({node.name: node for node in fragment.node})
    path = tmp_path / "fragment.pb"
    path.write_bytes(fragment.SerializeToString(deterministic=True))
    feeds = case_of("zoo").feed_files
    return [str(path), "--feed", f"x=@{feeds['x']}", "--feed", f"y=@{feeds['y']}"]


@pytest.mark.parametrize("runtime", ["graphrun", "graphrun-cc"])
def test_the_uncorrupted_fragment_runs(runtime, request, tmp_path):
    """The corrupted fragments below fail for their corruption alone."""
    code, stdout, stderr = refusal(runtime, request, zoo_fragment(tmp_path, lambda nodes: None))
    assert code == 0, f"{runtime} on the zoo fragment exited {code}: {stderr.strip()}"
    assert "out/add_v2:0" in stdout and "out/matmul_tb:0" in stdout


@pytest.mark.parametrize("runtime", ["graphrun", "graphrun-cc"])
def test_an_input_naming_no_node_is_one_line_naming_the_node(runtime, request, tmp_path):
    def misname(nodes):
        nodes["add"].input[1] = "y_typo"
    code, stdout, stderr = refusal(runtime, request, zoo_fragment(tmp_path, misname))
    line = assert_one_line_refusal(runtime, code, stdout, stderr, "an input naming no node")
    assert "'add'" in line and "y_typo" in line, f"{runtime} does not name the node and its input: {line}"


@pytest.mark.parametrize("runtime", ["graphrun", "graphrun-cc"])
def test_an_attr_of_the_wrong_type_is_one_line_naming_the_node(runtime, request, tmp_path):
    def mistype(nodes):
        nodes["MatMul"].attr["transpose_b"].i = 1   # TensorFlow's is a bool
    code, stdout, stderr = refusal(runtime, request, zoo_fragment(tmp_path, mistype))
    line = assert_one_line_refusal(runtime, code, stdout, stderr, "an attr of the wrong type")
    assert "'MatMul'" in line and "transpose_b" in line, f"{runtime} does not name the node and attr: {line}"


# -- TensorFlow still agrees with its committed answers ------------------------------------------

@pytest.fixture(scope="module")
def tf():
    import os
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before the import, to quiet its C++ logging
    return pytest.importorskip("tensorflow", reason="TensorFlow is not installed; `make test` installs it")


def output_shapes(graph_def):
    """{node: [dims or None (unknown rank)] per output} from the `_output_shapes` attrs viewers draw."""
    found = {}
    for node in graph_def.node:
        if "_output_shapes" in node.attr:
            found[node.name] = [None if s.unknown_rank else [d.size for d in s.dim]
                                for s in node.attr["_output_shapes"].list.shape]
    return found


@pytest.mark.tf_oracle
@pytest.mark.parametrize("name", [n for n in MODEL_NAMES if n not in REGISTRY_LACKS])
def test_output_shapes_never_contradict_tensorflows(tf, name):
    """as_graph_def(add_shapes=True) annotates every node as TensorFlow's does, never contradicting it.

    graphdef may know less (TensorFlow also evaluates Shape -> StridedSlice -> Pack chains
    while inferring) or more; a rank or a dimension both know must be the same.
    """
    data = (MODELS_DIR / name / "model.pb").read_bytes()
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(tf.compat.v1.GraphDef.FromString(data), name="")
    theirs = output_shapes(graph.as_graph_def(add_shapes=True))
    ours = output_shapes(load(MODELS_DIR / name / "model.pb").as_graph_def(add_shapes=True))
    contradictions = []
    for node, shapes in theirs.items():
        if len(ours.get(node, ())) != len(shapes):
            contradictions.append(f"{node}: TensorFlow lists {len(shapes)} output shapes, graphdef "
                                  f"{len(ours.get(node, ()))}")
            continue
        for index, (t, o) in enumerate(zip(shapes, ours[node])):
            if t is None or o is None:
                continue
            if len(t) != len(o) or any(a != b and a != -1 and b != -1 for a, b in zip(t, o)):
                contradictions.append(f"{node}:{index}: TensorFlow {t}, graphdef {o}")
    assert not contradictions, f"{name}: " + "; ".join(contradictions)


@pytest.mark.slow
@pytest.mark.tf_oracle
@pytest.mark.parametrize("name", MODEL_NAMES)
def test_tensorflow_gives_the_committed_outputs(tf, name):
    """The expected files are TensorFlow's answer for exactly the committed bytes, here and now."""
    case = case_of(name)
    graph_def = tf.compat.v1.GraphDef.FromString(case.model.read_bytes())
    why = why_tensorflow_cannot_run(tf, graph_def)
    if why:
        pytest.skip(f"{name}: {why}")
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
    config = tf.compat.v1.ConfigProto(device_count={"GPU": 0})
    with tf.compat.v1.Session(graph=graph, config=config) as sess:
        values = sess.run(case.fetches, {f"{feed}:0": value for feed, value in case.feeds.items()})
    replay.check_outputs("TensorFlow", case, [np.asarray(v) for v in values])
