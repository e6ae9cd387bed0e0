"""The TensorFlow-models guide's shell lines run the committed Keras model as written, and graphrun and
graphrun-cc print the same answer for it."""

import subprocess

from tests.docs.pages import DOCS, ROOT, blocks

PAGE = (DOCS / "guide" / "tf-models.md").read_text()


def test_the_frozen_model_commands(cc_runner):
    tools = {"graphrun": ROOT / ".venv" / "bin" / "graphrun", "build/graphrun-cc": cc_runner}
    (block,) = [b for b in blocks(PAGE, "sh") if "tests/tf_models/keras_cnn" in b]
    printed = {}
    for line in block.strip().splitlines():
        tool, _, args = line.partition("#")[0].strip().partition(" ")
        done = subprocess.run(f"{tools[tool]} {args}", shell=True, cwd=ROOT, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, (line, done.stderr)
        if not args.startswith("inspect"):
            printed[tool] = done.stdout
    assert set(printed) == set(tools)
    # the same names, dtypes and shapes; the values agree within the numerics policy, not always in bits
    heads = {tool: [line.partition(" = ")[0] for line in out.splitlines()] for tool, out in printed.items()}
    assert heads["graphrun"] == heads["build/graphrun-cc"] != []
