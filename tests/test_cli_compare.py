"""graphrun compare: the same feeds through python, cc (and tensorflow), a table, PASSED or FAILED.

A FAILED comparison is provoked without any hook in graphrun: --cc (or $GRAPHRUN_CC) names
a small wrapper around the real C++ runner that nudges one value of its JSON output.
"""

import json
import os
import stat
import sys
import textwrap

import numpy as np
import pytest

import graphdef as tf
from graphdef.graphrun import engines
from graphdef.graphrun.compare import errors
from graphdef.client.output_format import format_json
from tests.graphrun_helpers import CNN, MLP, fails, graphrun, json_line, ok, save_model

RANDOM_CNN = ["--random", "--shape", "x=4,8,8,1"]


@pytest.fixture(scope="module")
def cc():
    try:
        return engines.find_cc()
    except engines.EngineMissing as e:
        pytest.skip(f"{e}")


def nudging_cc(directory, real_cc, relative=0.01):
    """An executable that runs the real graphrun-cc and scales the first value of the first output."""
    script = directory / "nudged-cc"
    script.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import json, subprocess, sys
        done = subprocess.run([{str(real_cc)!r}] + sys.argv[1:], capture_output=True, text=True)
        if done.returncode:
            sys.stderr.write(done.stderr)
            sys.exit(done.returncode)
        doc = json.loads(done.stdout)
        holder, key = doc["outputs"][0], "values"
        while isinstance(holder[key], list):
            holder, key = holder[key], 0
        holder[key] = holder[key] * (1 + {relative!r})
        print(json.dumps(doc))
        """))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_python_and_cc_agree_on_the_cnn(capsys, cc):
    out = ok(capsys, "compare", CNN, *RANDOM_CNN)
    lines = out.splitlines()
    assert lines[0] == f"compare {CNN}: python (reference) vs cc; atol 1e-05, rtol 1e-05"
    assert lines[1] == "feeds: x float32 [4,8,8,1] random (seed 0)"
    assert lines[2].startswith("time: python ") and "cc includes its process start" in lines[2]
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


def test_a_perturbed_engine_fails(capsys, cc, tmp_path):
    nudged = nudging_cc(tmp_path, cc)
    code, out, err = graphrun(capsys, "compare", CNN, *RANDOM_CNN, "--cc", nudged)
    assert (code, err) == (1, "")
    row = [line for line in out.splitlines() if line.startswith("softmax/probs:0  cc")][0].split()
    assert row[-1] == "DIFFERS" and 0.009 < float(row[5]) < 0.011   # the relative error is the 1% nudge
    assert "- softmax/probs:0 in cc: 1 of 40 elements differ beyond atol 1e-05 + rtol 1e-05 * |reference|, " \
           "first at [0, 0]:" in out
    assert out.splitlines()[-1] == "FAILED: 1 problem (listed above)"
    # a looser tolerance accepts the same nudge
    assert ok(capsys, "compare", CNN, *RANDOM_CNN, "--cc", nudged, "--rtol", "0.02").endswith("PASSED: 1 output agrees across python, cc\n")


def test_the_environment_variable_names_the_cc_binary(capsys, cc, tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHRUN_CC", str(nudging_cc(tmp_path, cc, relative=0.5)))
    code, out, _ = graphrun(capsys, "compare", MLP, "--random", "--shape", "x=3,16", "--json")
    report = json_line(out)
    assert code == 1 and report["passed"] is False and report["rows"][1]["result"] == "DIFFERS"


def test_the_reference_is_the_first_engine(capsys, cc):
    out = ok(capsys, "compare", MLP, "--random", "--shape", "x=2,16", "--engines", "cc,python")
    assert f"compare {MLP}: cc (reference) vs python;" in out
    assert "output/score:0  cc      float32  [2,1]  -" in out


def test_nan_fails_unless_allowed(capsys, cc, tmp_path):
    path = save_model(tmp_path / "nan.pb", lambda: tf.sqrt(tf.placeholder(tf.float32, [3], name="x"), name="root"))
    code, out, _ = graphrun(capsys, "compare", path, "--feed", "x=[4, -1, 9]")
    assert code == 1
    assert "root:0  python  float32  [3]    -            -            1    0    NaN/Inf" in out
    assert "- root:0 in python: holds 1 NaN and 0 Inf values" in out
    out = ok(capsys, "compare", path, "--feed", "x=[4, -1, 9]", "--allow-nonfinite")
    assert "root:0  cc      float32  [3]    0            0            1    0    ok" in out


def test_an_engine_that_cannot_run_the_model_fails_the_comparison(capsys, tmp_path):
    refusing = tmp_path / "refusing-cc"
    refusing.write_text("#!/bin/sh\necho 'graphrun-cc: model.pb: no kernel for Fancy (f)' >&2\nexit 3\n")
    refusing.chmod(0o755)
    code, out, err = graphrun(capsys, "compare", MLP, "--random", "--shape", "x=2,16", "--cc", refusing)
    assert (code, err) == (1, "")
    assert "- cc failed: graphrun-cc exited with 3: graphrun-cc: model.pb: no kernel for Fancy (f)\n" in out
    assert "output/score:0  python  float32  [2,1]  -            -            0    0    reference" in out
    assert out.endswith("FAILED: 1 problem (listed above)\n")


@pytest.mark.parametrize("argv, mentions", [
    (["--engines", "python,onnx"], ["'onnx'", "python, cc, tensorflow"]),
    (["--engines", "python"], ["two or more"]),
    (["--engines", "python,python"], ["two or more"]),
    (["--atol", "-1"], ["--atol"]),
    (["--rtol", "nan"], ["--rtol"]),
    (["--cc", "/nonexistent/graphrun-cc"], ["--cc", "not an executable"]),
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


def test_tensorflow_engine(capsys, cc):
    pytest.importorskip("tensorflow")
    report = json_line(ok(capsys, "compare", CNN, *RANDOM_CNN, "--engines", "python,cc,tensorflow", "--json"))
    assert report["passed"] is True
    assert [r["engine"] for r in report["rows"]] == ["python", "cc", "tensorflow"]


# -- the pieces ---------------------------------------------------------------------------

@pytest.mark.parametrize("array", [
    np.random.default_rng(3).integers(0, 2 ** 32, 5000, dtype=np.uint64).astype(np.uint32).view(np.float32),
    np.random.default_rng(4).integers(0, 2 ** 64 - 1, 5000, dtype=np.uint64).view(np.float64).reshape(50, 100),
    np.random.default_rng(5).integers(0, 2 ** 16, 999, dtype=np.uint16).view(np.float16),
    np.array([-(2 ** 63), 2 ** 63 - 1], np.int64),
    np.array([2 ** 64 - 1, 0], np.uint64),
    np.array([[True], [False]]),
    np.zeros((2, 0, 3), np.int8),
    np.float32(np.nan),
], ids=["float32-bits", "float64-bits", "float16-bits", "int64", "uint64", "bool", "empty", "nan-scalar"])
def test_json_output_reads_back_exactly(array):
    """cc's --json output becomes the very arrays it printed, NaN payloads aside."""
    (entry,) = json.loads(format_json([("t:0", array)]))["outputs"]
    back = engines.array_from_json(entry["values"], entry["dtype"], entry["shape"])
    array = np.asarray(array)
    assert back.dtype == array.dtype and back.shape == array.shape
    if array.dtype.kind == "f":
        same = (back == array) | (np.isnan(back) & np.isnan(array))
        assert same.all() and (np.signbit(back) == np.signbit(array))[~np.isnan(array)].all()
    else:
        assert np.array_equal(back, array)


def test_error_measures():
    ref = np.array([1.0, 0.0, np.nan, np.inf, 2.0, 0.0], np.float32)
    value = np.array([1.5, 0.0, np.nan, np.inf, 2.0, 1e-9], np.float32)
    abs_err, rel_err, agree = errors(value, ref, atol=1e-8, rtol=0.1)
    assert abs_err == 0.5 and rel_err == np.inf    # 1e-9 against an exact zero
    assert agree.tolist() == [False, True, True, True, True, True]
    _, _, agree = errors(np.array([np.inf, 1.0]), np.array([-np.inf, np.nan]), 1.0, 1.0)
    assert agree.tolist() == [False, False]


def test_find_cc_prefers_the_flag_then_the_environment(tmp_path, monkeypatch, cc):
    fake = tmp_path / "my-cc"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("GRAPHRUN_CC", str(fake))
    assert engines.find_cc() == fake
    assert engines.find_cc(str(cc)) == cc
    monkeypatch.setenv("GRAPHRUN_CC", str(tmp_path / "absent"))
    with pytest.raises(engines.EngineMissing, match="GRAPHRUN_CC"):
        engines.find_cc()
    monkeypatch.delenv("GRAPHRUN_CC")
    assert os.path.samefile(engines.find_cc(), cc)
