"""Real TensorFlow/Keras models, frozen the standard way, run by the Session, graphrun and graphrun-cc.

The models and TensorFlow's answers come from tests/real_models/generate.py (its docstring
gives the tolerance rule: a few times TensorFlow's own float32 error against a float64
evaluation of the same graph). Committed models live in tests/real_models/; those too large
to commit are generated into build/real_models/ on first use, when TensorFlow is installed.

A model a runtime cannot run yet is a strict xfail naming the op types it lacks, and its
refusal is tested too: exit code 3 and one line naming exactly those op types (TF control
flow announced in plain words first). test_missing_op_lists_are_current_* fail as soon as a
list no longer says what is missing, so each entry goes when its kernels land. The module
ends by printing a table: model, op types, result per runtime (also written to
build/real_models/STATUS.txt).
"""

import contextlib
import importlib.util
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import graphdef
from graphdef._proto import graph_pb2
from graphdef.graphrun import cli
from graphdef.ops import REGISTRY
from graphdef.wire.serialize import load
from tests.conformance import replay
from tests.real_models import generate

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
COMMITTED_DIR = REPO / "tests" / "real_models"
CACHE_DIR = REPO / "build" / "real_models"
COMMITTED = sorted(p.name for p in COMMITTED_DIR.iterdir() if (p / "case.json").is_file())
CACHED = [name for name, b in generate.BUILDERS.items() if not b.committed]
MODELS = COMMITTED + CACHED
RUNTIMES = ["python", "graphrun", "graphrun-cc"]
EXIT_MODEL = 3

# What each runtime lacks per model: op types with no kernel on the path to the fetches.
# The Python Session and graphrun share graphdef's registry; graphrun-cc has its own kernels.
REGISTRY_LACKS = {}
CC_LACKS = {}
LACKS = {"python": REGISTRY_LACKS, "graphrun": REGISTRY_LACKS, "graphrun-cc": CC_LACKS}
WHO = {"python": "graphdef's op registry", "graphrun": "graphdef's op registry", "graphrun-cc": "graphrun-cc"}

RESULTS = {}   # (model, runtime) -> "pass", "fails" or "refused: ..."


def params(runtime):
    out = []
    for name in MODELS:
        missing = LACKS[runtime].get(name)
        marks = [pytest.mark.xfail(strict=True, reason=f"{WHO[runtime]} has no kernel for {', '.join(missing)}")
                 ] if missing else []
        out.append(pytest.param(name, id=name, marks=marks))
    return out


def model_dir(name):
    """The model's directory; a model too large to commit is generated into build/ on first use."""
    if name in COMMITTED:
        return COMMITTED_DIR / name
    directory = CACHE_DIR / name
    if not (directory / "case.json").is_file():
        if importlib.util.find_spec("tensorflow") is None:
            pytest.skip(f"{name} is generated with TensorFlow on first use, and TensorFlow is not installed "
                        "(`make test` installs it)")
        # every missing one in one process: importing TensorFlow is much of the cost
        missing = [n for n in CACHED if not (CACHE_DIR / n / "case.json").is_file()]
        proc = subprocess.run([sys.executable, "-m", "tests.real_models.generate", "--out", str(CACHE_DIR), *missing],
                              cwd=REPO, capture_output=True, text=True, timeout=3600)
        assert proc.returncode == 0, f"generating {', '.join(missing)} failed: {proc.stderr[-2000:]}"
    return directory


def spec_of(name):
    return json.loads((model_dir(name) / "case.json").read_text())


def cli_args(case):
    args = [str(case.model)]
    for feed, path in case.feed_files.items():
        args += ["--feed", f"{feed}=@{path}"]
    for fetch in case.fetches:
        args += ["--fetch", fetch]
    return args + ["--json"]


def run_graphrun(args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(args)
    return code, out.getvalue(), err.getvalue()


def run_cc(runner, args):
    proc = subprocess.run([str(runner), *args], capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


def json_outputs(runtime, case, stdout):
    lines = stdout.splitlines()
    assert len(lines) == 1, f"{runtime} --json on {case.name} printed {len(lines)} lines"
    return [replay.from_json_output(o)[1] for o in json.loads(lines[0])["outputs"]]


@pytest.fixture(scope="session")
def cc_kernels(cc_runner):
    proc = subprocess.run([str(cc_runner), "--list-kernels"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return {line.split()[0] for line in proc.stdout.splitlines() if line.strip()}


@pytest.fixture(scope="module", autouse=True)
def status_table(request):
    """Prints, after the module, which runtime runs which model (and writes it to build/)."""
    yield
    if not RESULTS:
        return
    rows = [["model", "op types", *RUNTIMES, "op types graphdef / graphrun-cc lack"]]
    for name in MODELS:
        path = (COMMITTED_DIR if name in COMMITTED else CACHE_DIR) / name / "case.json"
        ops = len(json.loads(path.read_text())["ops"]) if path.is_file() else "?"
        lacks = " / ".join(", ".join(table.get(name, ())) or "-" for table in (REGISTRY_LACKS, CC_LACKS))
        rows.append([name, str(ops), *(RESULTS.get((name, r), "not run") for r in RUNTIMES), lacks])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    text = "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows) + "\n"
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    (CACHE_DIR / "STATUS.txt").write_text(text)
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line("\nreal models (tests/real_models/test_real_models.py):")
        for line in text.splitlines():
            reporter.write_line("  " + line)


def record(name, runtime, run):
    """Runs `run()`, recording its result for the status table."""
    try:
        run()
    except BaseException as e:
        missing = LACKS[runtime].get(name)
        RESULTS[(name, runtime)] = "xfail (lacks ops)" if missing else f"FAILS ({type(e).__name__})"
        raise
    RESULTS[(name, runtime)] = "pass"


# -- the files ---------------------------------------------------------------------------------------

def test_every_family_of_the_issue_is_there():
    wanted = {"mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0", "densenet121", "nasnet_mobile",
              "convnext_tiny", "resnet50_v2", "lstm", "gru", "simple_rnn",
              "bidirectional_masked", "tf_keras_lstm", "transformer_encoder", "unet", "detection_postprocess",
              "tf1_cond_while", "tf1_batchnorm_training_flag", "tf1_fused_batchnorm_v1"}
    assert wanted <= set(MODELS), f"missing {sorted(wanted - set(MODELS))}; see tests/real_models/generate.py"
    assert set(COMMITTED) == {n for n, b in generate.BUILDERS.items() if b.committed}, \
        f"the committed models differ from the generator's; run `{generate.REGENERATE}`"


def test_committed_files_stay_small():
    sizes = {name: sum(f.stat().st_size for f in (COMMITTED_DIR / name).iterdir()) for name in COMMITTED}
    large = {n: s for n, s in sizes.items() if s > generate.MAX_COMMITTED_BYTES + 64 * 1024}
    assert not large, f"over 2 MB: {large}; generate them at test time instead (committed=False)"
    assert sum(sizes.values()) < 20 * 1024 * 1024, f"{sum(sizes.values())} bytes committed in all"


@pytest.mark.parametrize("name", COMMITTED)
def test_case_files_describe_the_model(name):
    spec = spec_of(name)
    graph_def = graph_pb2.GraphDef.FromString((COMMITTED_DIR / name / "model.pb").read_bytes())
    census = {}
    for node in graph_def.node:
        census[node.op] = census.get(node.op, 0) + 1
    # the generator counts function bodies too; graphdef's proto does not read the library yet
    assert all(spec["ops"].get(op, 0) >= n for op, n in census.items()), \
        f"{name}: case.json's census is stale; run `{generate.REGENERATE} {name}`"
    assert len(spec["tolerance_rules"]) == len(spec["fetches"]) == len(spec["tolerances"])


def test_float64_references_were_computed_where_tensorflow_can():
    """Only graphs with an op TensorFlow has no float64 kernel for fall back to the std rule."""
    fallback = sorted(n for n in COMMITTED if not spec_of(n)["float64_reference"].startswith("TensorFlow ran"))
    assert fallback == ["detection_postprocess"], fallback


def test_missing_op_lists_are_current_for_the_registry():
    actual = {}
    for name in COMMITTED:
        missing = tuple(sorted(op for op in spec_of(name)["ops"] if op not in REGISTRY))
        if missing:
            actual[name] = missing
    committed_lacks = {n: m for n, m in REGISTRY_LACKS.items() if n in COMMITTED}
    assert actual == committed_lacks, f"set REGISTRY_LACKS in {Path(__file__).name} to {actual}"


def test_missing_op_lists_are_current_for_the_cc_runner(cc_kernels):
    actual = {}
    for name in COMMITTED:
        missing = tuple(sorted(op for op in spec_of(name)["ops"] if op not in cc_kernels))
        if missing:
            actual[name] = missing
    committed_lacks = {n: m for n, m in CC_LACKS.items() if n in COMMITTED}
    assert actual == committed_lacks, f"set CC_LACKS in {Path(__file__).name} to {actual}"


# -- each runtime reproduces TensorFlow ------------------------------------------------------------------

@pytest.mark.parametrize("name", params("python"))
def test_python_session(name):
    case = replay.load(model_dir(name))

    def run():
        with graphdef.Session(graph=load(case.model)) as sess:
            values = sess.run(case.fetches, {f"{feed}:0": value for feed, value in case.feeds.items()})
        replay.check_outputs("Python Session", case, [np.asarray(v) for v in values])
    record(name, "python", run)


@pytest.mark.parametrize("name", params("graphrun"))
def test_graphrun(name):
    case = replay.load(model_dir(name))

    def run():
        code, stdout, stderr = run_graphrun(cli_args(case))
        assert code == 0, f"graphrun on {name} exited {code}: {stderr.strip()}"
        replay.check_outputs("graphrun", case, json_outputs("graphrun", case, stdout))
    record(name, "graphrun", run)


@pytest.mark.parametrize("name", params("graphrun-cc"))
def test_graphrun_cc(name, cc_runner):
    case = replay.load(model_dir(name))

    def run():
        code, stdout, stderr = run_cc(cc_runner, cli_args(case))
        assert code == 0, f"graphrun-cc on {name} exited {code}: {stderr.strip()}"
        replay.check_outputs("graphrun-cc", case, json_outputs("graphrun-cc", case, stdout))
    record(name, "graphrun-cc", run)


# -- what cannot run yet is refused in one line naming it ------------------------------------------------

CONTROL_FLOW_WORDS = {"Enter": "a TF1 while-loop", "Switch": "a TF1 cond", "Merge": "a TF1 cond",
                      "StatelessWhile": "TF2 functional control flow", "While": "TF2 functional control flow",
                      "StatelessIf": "TF2 functional control flow", "If": "TF2 functional control flow"}


def listed_op_types(line):
    _, found, rest = line.partition("no kernel for ")
    assert found, f"the refusal does not say 'no kernel for': {line!r}"
    return re.findall(r"(?:^|, )([A-Za-z0-9_]+) \(", rest.split("; ")[0])


REFUSED = [(runtime, name) for runtime in ("graphrun", "graphrun-cc") for name in MODELS
           if LACKS[runtime].get(name)]


# While a zoo model lacks a kernel somewhere, its refusal there must name what is missing. Today
# none does (an empty parametrization would only show up as a skip); refusals as such are
# tested in tests/python/test_unsupported_ops.py.
if REFUSED:
    @pytest.mark.parametrize("runtime, name", REFUSED)
    def test_what_cannot_run_is_refused_naming_it(runtime, name, request):
        case = replay.load(model_dir(name))
        if runtime == "graphrun":
            code, stdout, stderr = run_graphrun(cli_args(case))
        else:
            code, stdout, stderr = run_cc(request.getfixturevalue("cc_runner"), cli_args(case))
        lines = stderr.splitlines()
        assert code == EXIT_MODEL and stdout == "" and len(lines) == 1, (code, stdout[:200], stderr)
        line = lines[0]
        # what a run names is the graph's own nodes; ops inside function bodies come with their callers
        top_level = {node.op for node in graph_pb2.GraphDef.FromString(case.model.read_bytes()).node}
        assert set(listed_op_types(line)) == set(LACKS[runtime][name]) & top_level, line
        words = [CONTROL_FLOW_WORDS[op] for op in LACKS[runtime][name] if op in CONTROL_FLOW_WORDS]
        if words:
            assert line.startswith(f"{runtime}: {case.model}: this graph contains "), line
            assert all(w in line for w in words), line
