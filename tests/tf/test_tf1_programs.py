"""TF1 programs print the same with real TensorFlow and with `import graphdef as tf`.

Each program in tests/tf1_programs/ is `main(tf)`, written against tensorflow.compat.v1.
TensorFlow runs them all in one subprocess (tf.compat.v1 with v2 behaviour disabled, which
is process-wide state that must not leak into the other tests); graphdef runs them here.
TensorFlow's output is also committed (tests/tf1_programs/transcripts/), so the graphdef
side is checked without TensorFlow too, and a test keeps the transcripts TensorFlow's.
Printed numbers may differ by one unit in their last digit; nothing else may differ.
"""

import importlib.util
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import tf1_programs
from tests.tf1_programs import NEEDS, PROGRAMS, TRANSCRIPTS, differences

REPO = Path(__file__).resolve().parents[2]
REWRITE = ".venv/bin/python -m tests.tf1_programs --write"
# Programs that need a package besides the tf module to run at all (they read back what they wrote).
REQUIRES = {"summaries": "tensorboard"}


def graphdef_params():
    return [pytest.param(name, id=name, marks=[pytest.mark.xfail(strict=True, reason=f"graphdef lacks {NEEDS[name]}")]
                         if name in NEEDS else []) for name in PROGRAMS]


def graphdef_output(name):
    if name in REQUIRES:
        pytest.importorskip(REQUIRES[name], reason=f"{name} needs {REQUIRES[name]}")
    return tf1_programs.run(tf1_programs.graphdef_module(), name)


def transcript(name):
    path = TRANSCRIPTS / f"{name}.txt"
    assert path.is_file(), f"no transcript for {name}; write them with `{REWRITE}`"
    return path.read_text()


def assert_same_print(name, expected, printed, expected_by, printed_by):
    problems = differences(expected, printed)
    assert not problems, (f"{name}: {printed_by} does not print what {expected_by} prints:\n  "
                          + "\n  ".join(problems))


@pytest.fixture(scope="module")
def tensorflow_output():
    """{program: what it prints with TensorFlow}, from one subprocess running them all."""
    if importlib.util.find_spec("tensorflow") is None:
        pytest.skip("TensorFlow is not installed; `make test` installs it")
    proc = subprocess.run([sys.executable, "-m", "tests.tf1_programs", "--json"], cwd=REPO,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0 and proc.stdout.strip(), \
        f"the TensorFlow run exited {proc.returncode}: {proc.stderr.strip()[-2000:]}"
    return json.loads(proc.stdout.splitlines()[-1])


def tensorflow_printed(outputs, name):
    output = outputs[name]
    assert not isinstance(output, dict), f"{name} fails with TensorFlow itself: {output['error']}"
    return output


# -- both ways --------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.tf_oracle
@pytest.mark.parametrize("name", graphdef_params())
def test_graphdef_prints_what_tensorflow_prints(name, tensorflow_output):
    expected = tensorflow_printed(tensorflow_output, name)
    assert_same_print(name, expected, graphdef_output(name), "TensorFlow", "graphdef")


@pytest.mark.parametrize("name", graphdef_params())
def test_graphdef_prints_the_committed_transcript(name):
    assert_same_print(name, transcript(name), graphdef_output(name), "the committed TensorFlow transcript",
                      "graphdef")


@pytest.mark.slow
@pytest.mark.tf_oracle
@pytest.mark.parametrize("name", PROGRAMS)
def test_tensorflow_prints_the_committed_transcript(name, tensorflow_output):
    printed = tensorflow_printed(tensorflow_output, name)
    problems = differences(transcript(name), printed)
    assert not problems, (f"{name}: the transcript is not what TensorFlow prints now; rewrite it with "
                          f"`{REWRITE}`:\n  " + "\n  ".join(problems))


# -- the programs themselves ---------------------------------------------------------------------

def test_every_program_file_is_listed():
    files = {p.stem for p in TRANSCRIPTS.parent.glob("*.py") if not p.stem.startswith("_")}
    assert files == set(PROGRAMS), f"tests/tf1_programs/__init__.py PROGRAMS differs from the files: {sorted(files)}"
    assert set(NEEDS) <= set(PROGRAMS)


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_program_is_a_function_of_the_tf_module(name):
    """main(tf) and nothing else decides which TensorFlow runs it: no imports of either, no exec/eval."""
    module = importlib.import_module(f"tests.tf1_programs.{name}")
    assert list(inspect.signature(module.main).parameters) == ["tf"], f"{name}.main must take exactly `tf`"
    source = inspect.getsource(module)
    for forbidden in ("import tensorflow", "from tensorflow", "import graphdef", "from graphdef"):
        assert forbidden not in source, f"{name} contains {forbidden!r}"
    builtin = re.search(r"(?<![.\w])(exec|eval|compile|__import__)\(", source)  # Tensor.eval() is fine
    assert builtin is None, f"{name} calls {builtin.group(1)}()"


@pytest.mark.parametrize("expected,printed,same", [
    ("loss 0.1235", "loss 0.1234", True),           # one unit in the last digit
    ("loss 0.1235", "loss 0.1233", False),
    ("w -0.0000 b 1.5e-03", "w 0.0000 b 1.6e-03", True),
    ("step 100", "step 101", False),                # integers exactly
    ("eval: 75", "eval: 75.0", False),
    ("[1 1 0]", "[1 1 0]", True),
    ("a\nb", "a", False),
    ("name layer/w:0", "name layer/w_1:0", False),
])
def test_differences_allow_one_unit_in_the_last_printed_digit(expected, printed, same):
    assert (not differences(expected, printed)) is same
