"""graphrun compare: the same feeds through python, cc (and tensorflow), a table, PASSED or FAILED.

python and cc are the Session's two engines in this process. A FAILED comparison is provoked by
an engine function that nudges one value of the real cc engine's output (the comparison's own
logic is the subject), and by a model the cc engine has no kernel for.
"""

import numpy as np
import pytest

import graphdef as tf
from graphdef._native import capi
from graphdef.graphrun import engines
from graphdef.graphrun.compare import errors
from tests.support.graphrun_helpers import CNN, MLP, fails, graphrun, json_line, ok, save_model

RANDOM_CNN = ["--random", "--shape", "x=4,8,8,1"]


@pytest.fixture(scope="module")
def cc():
    """The cc engine needs libgraphrun.so: a missing library fails these tests, never skips them."""
    try:
        return capi.load_library()
    except capi.LibraryMissing as e:
        pytest.fail(f"the cc engine needs libgraphrun.so: {e}")


def nudge_cc(monkeypatch, relative=0.01):
    """Engine cc, scaling the first value of its first output by 1 + relative."""
    real = engines.run_cc

    def nudged(job):
        values = real(job)
        values[0].reshape(-1)[0] *= 1 + relative
        return values
    monkeypatch.setitem(engines.ENGINES, "cc", nudged)


@pytest.mark.slow
def test_python_and_cc_agree_on_the_cnn(capsys, cc):
    out = ok(capsys, "compare", CNN, *RANDOM_CNN)
    lines = out.splitlines()
    assert lines[0] == f"compare {CNN}: python (reference) vs cc; atol 1e-05, rtol 1e-05"
    assert lines[1] == "feeds: x float32 [4,8,8,1] random (seed 0)"
    assert lines[2].startswith("time: python ") and "cc includes loading the graph" in lines[2]
    assert lines[3].split() == ["output", "engine", "dtype", "shape", "max", "abs", "err", "max", "rel", "err",
                                "nan", "inf", "result"]
    assert lines[4].split() == ["softmax/probs:0", "python", "float32", "[4,10]", "-", "-", "0", "0", "reference"]
    row = lines[5].split()
    assert row[:4] == ["softmax/probs:0", "cc", "float32", "[4,10]"] and row[6:] == ["0", "0", "ok"]
    assert float(row[4]) < 1e-6 and float(row[5]) < 1e-5
    assert lines[-1] == "PASSED: 1 output agrees across python, cc"


def test_json_report(capsys, cc):
    report = json_line(ok(capsys, "compare", MLP, "--random", "--shape", "x=16,16", "--json", "--atol", "1e-6"))
    assert report["passed"] is True and report["problems"] == [] and report["engines"] == ["python", "cc"]
    assert (report["atol"], report["rtol"]) == (1e-6, 1e-5)
    assert [(r["output"], r["engine"], r["shape"], r["result"]) for r in report["rows"]] == [
        ("output/score:0", "python", [16, 1], "reference"), ("output/score:0", "cc", [16, 1], "ok")]
    assert report["rows"][1]["max_abs_err"] <= 1e-6


@pytest.mark.slow
def test_a_perturbed_engine_fails(capsys, cc, monkeypatch):
    nudge_cc(monkeypatch)
    code, out, err = graphrun(capsys, "compare", CNN, *RANDOM_CNN)
    assert (code, err) == (1, "")
    row = [line for line in out.splitlines() if line.startswith("softmax/probs:0  cc")][0].split()
    assert row[-1] == "DIFFERS" and 0.009 < float(row[5]) < 0.011   # the relative error is the 1% nudge
    assert "- softmax/probs:0 in cc: 1 of 40 elements differ beyond atol 1e-05 + rtol 1e-05 * |reference|, " \
           "first at [0, 0]:" in out
    assert out.splitlines()[-1] == "FAILED: 1 problem (listed above)"
    # a looser tolerance accepts the same nudge
    assert ok(capsys, "compare", CNN, *RANDOM_CNN, "--rtol", "0.02").endswith(
        "PASSED: 1 output agrees across python, cc\n")


def test_the_reference_is_the_first_engine(capsys, cc):
    out = ok(capsys, "compare", MLP, "--random", "--shape", "x=2,16", "--engines", "cc,python")
    assert f"compare {MLP}: cc (reference) vs python;" in out
    assert "output/score:0  cc      float32  [2,1]  -" in out


@pytest.mark.slow
def test_nan_fails_unless_allowed(capsys, cc, tmp_path):
    path = save_model(tmp_path / "nan.pb", lambda: tf.sqrt(tf.placeholder(tf.float32, [3], name="x"), name="root"))
    code, out, _ = graphrun(capsys, "compare", path, "--feed", "x=[4, -1, 9]")
    assert code == 1
    assert "root:0  python  float32  [3]    -            -            1    0    NaN/Inf" in out
    assert "- root:0 in python: holds 1 NaN and 0 Inf values" in out
    out = ok(capsys, "compare", path, "--feed", "x=[4, -1, 9]", "--allow-nonfinite")
    assert "root:0  cc      float32  [3]    0            0            1    0    ok" in out


def test_an_engine_that_cannot_run_the_model_fails_the_comparison(capsys, cc, tmp_path):
    # graphrun-cc's Sqrt takes float32 and float64; the numpy engine's float16 too
    path = save_model(tmp_path / "half.pb", lambda: tf.sqrt(tf.placeholder(tf.float16, [2], name="x"), name="root"))
    code, out, err = graphrun(capsys, "compare", path, "--feed", "x=[4, 9]")
    assert (code, err) == (1, "")
    (failure,) = [line for line in out.splitlines() if line.startswith("- cc failed: ")]
    assert "'x'" in failure and "half" in failure
    assert "root:0  python  float16  [2]    -            -            0    0    reference" in out
    assert out.endswith("FAILED: 1 problem (listed above)\n")


@pytest.mark.parametrize("argv, mentions", [
    (["--engines", "python,onnx"], ["'onnx'", "python, cc, tensorflow"]),
    (["--engines", "python"], ["two or more"]),
    (["--engines", "python,python"], ["two or more"]),
    (["--atol", "-1"], ["--atol"]),
    (["--rtol", "nan"], ["--rtol"]),
    (["--cc", "graphrun-cc"], ["--cc"]),  # cc runs in process: there is no executable to name
])
def test_usage_errors(capsys, argv, mentions):
    fails(capsys, 2, "compare", MLP, "--random", "--shape", "x=1,16", *argv, mentions=mentions)


def test_feed_errors_come_before_any_engine(capsys):
    fails(capsys, 2, "compare", MLP, mentions=["x (float32, [?,16])", "--random"])
    fails(capsys, 2, "compare", MLP, "--feed", "nope=1", mentions=["nope", "x (float32, [?,16])"])


def test_help_documents_the_verdict_exit_codes(capsys):
    code, out, _ = graphrun(capsys, "compare", "--help")
    assert code == 0
    section = out[out.index("exit codes:"):]
    assert "\n  0    PASSED" in section and "\n  1    FAILED" in section and "\n  2 " in section


@pytest.mark.slow
@pytest.mark.tf_oracle
def test_tensorflow_engine(capsys, cc):
    pytest.importorskip("tensorflow")
    report = json_line(ok(capsys, "compare", CNN, *RANDOM_CNN, "--engines", "python,cc,tensorflow", "--json"))
    assert report["passed"] is True
    assert [r["engine"] for r in report["rows"]] == ["python", "cc", "tensorflow"]


# -- the pieces ---------------------------------------------------------------------------

def test_error_measures():
    ref = np.array([1.0, 0.0, np.nan, np.inf, 2.0, 0.0], np.float32)
    value = np.array([1.5, 0.0, np.nan, np.inf, 2.0, 1e-9], np.float32)
    abs_err, rel_err, agree = errors(value, ref, atol=1e-8, rtol=0.1)
    assert abs_err == 0.5 and rel_err == np.inf    # 1e-9 against an exact zero
    assert agree.tolist() == [False, True, True, True, True, True]
    _, _, agree = errors(np.array([np.inf, 1.0]), np.array([-np.inf, np.nan]), 1.0, 1.0)
    assert agree.tolist() == [False, False]
