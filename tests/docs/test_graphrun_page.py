"""The graphrun guide stays true: its sample outputs and its Dask example."""

import re
import subprocess
import sys

import pytest

from graphdef._native import capi
from tests.docs.pages import DOCS, ROOT, blocks, samples
from tests.support.graphrun_helpers import graphrun, ok

PAGE = (DOCS / "guide" / "graphrun.md").read_text()
SAMPLES = samples(PAGE)


def sample(command):
    """The output the page shows under `$ <command>`."""
    assert command in SAMPLES, f"the graphrun guide shows no output for {command}"
    return SAMPLES[command]


def run(capsys, monkeypatch, command):
    monkeypatch.chdir(ROOT)                        # the samples use paths relative to the repository
    return ok(capsys, *command.split()[1:])


def test_inspect_sample(capsys, monkeypatch):
    command = "graphrun inspect tests/models/mlp.pb"
    assert run(capsys, monkeypatch, command) == sample(command)


def test_compare_sample(capsys, monkeypatch):
    try:
        capi.load_library()  # compare's cc engine
    except capi.LibraryMissing as e:
        pytest.fail(f"compare's cc engine needs libgraphrun.so: {e}")
    command = "graphrun compare tests/models/cnn.pb --random --shape x=4,8,8,1"
    shown, actual = sample(command).splitlines(), run(capsys, monkeypatch, command).splitlines()
    # times vary, and the last digits of the errors with the machine's float arithmetic
    same = [i for i, line in enumerate(shown) if not line.startswith(("time:", "softmax/probs:0  cc"))]
    assert [actual[i] for i in same] == [shown[i] for i in same] and len(actual) == len(shown)


def test_bench_sample_has_the_real_layout(capsys, monkeypatch):
    command = "graphrun bench tests/models/mlp.pb --random --shape x=256,16 --runs 200 --profile --top 3"
    shown, actual = sample(command).splitlines(), run(capsys, monkeypatch, command).splitlines()
    assert len(actual) == len(shown)
    masked = lambda line: re.sub(r"[\d.]+%?", "#", line).split()  # noqa: E731
    for a, s in zip(actual, shown):
        if s.startswith("  ") and s.split()[0] not in ("op", "node"):
            continue  # a table row: which ops and nodes are slowest varies from run to run
        assert masked(a) == masked(s), (a, s)


def test_optimize_sample(capsys, monkeypatch, tmp_path):
    command = "graphrun optimize tests/real_models/mobilenet_v2/model.pb -o mobilenet_v2.opt.pb"
    monkeypatch.chdir(ROOT)
    args = command.split()[1:]
    args[-1] = str(tmp_path / args[-1])            # the written model goes to a scratch folder, not the checkout
    code, out, err = graphrun(capsys, *args)      # optimize reports on stderr, as a tool writing a file does
    assert (code, out, err) == (0, "", sample(command))


def test_the_verbs_shown_exist():
    """Every `graphrun VERB` the page's command list shows is a verb graphrun has."""
    from graphdef.graphrun import cli
    listing = next(b for b in blocks(PAGE, "sh") if "graphrun inspect" in b)
    verbs = {line.split()[1] for line in listing.splitlines() if line.startswith("graphrun ")}
    verbs -= {v for v in verbs if v.endswith((".pb", ".pbtxt"))}
    for verb in sorted(verbs):
        assert verb in cli.VERBS, f"the graphrun guide shows `graphrun {verb}`, which is no verb"


@pytest.mark.slow
def test_dask_example(tmp_path):
    """The page's Dask example as written, on 200,000 rows instead of 10 million."""
    pytest.importorskip("dask.array")
    pytest.importorskip("distributed")
    (block,) = [b for b in blocks(PAGE, "py") if "dask" in b]
    assert "10_000_000" in block
    script = tmp_path / "dask_example.py"
    script.write_text(block.replace("10_000_000", "200_000").replace("250_000", "50_000"))
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert 0.3 < float(done.stdout.strip().splitlines()[-1]) < 0.7   # the mean sigmoid score
