"""Both runtimes on the same damaged checkpoints: fuzz/py's checkpoint mutations (index entries,
header, table bytes, shard bytes) of TensorFlow-made and graphdef-made SavedModels, a fixed seed,
each case run by graphrun and graphrun-cc. Whenever either names a file of the checkpoint, both
must give the same exit code and line: the oracle is the other runtime, the cases no one chose."""
import contextlib
import io
import random
import subprocess
import sys
from pathlib import Path

import pytest

from graphdef.graphrun import cli
from tests.hostile.test_cc_invalid_models import unpack_sections

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "fuzz" / "py"))
import checkpoint_cases  # noqa: E402
import saved_model_cases  # noqa: E402
from file_cases import pack, read_tree, unpack, write_tree  # noqa: E402

CASES = 400
TF_SEEDS = ["tf1_meta_checkpoint", "tf1_ref_variables", "tf1_resource_variables", "tf2_module"]


def _seeds(folder):
    saved_model_cases.graphdef_seed(str(folder / "gd"))
    seeds = [pack(read_tree(str(folder / "gd")))]
    for name in TF_SEEDS:
        export = unpack_sections((REPO / "fuzz" / "seeds" / f"{name}.savedmodel").read_bytes(), folder / name)
        seeds.append(pack(read_tree(str(export))))
    return seeds


def _line(text, program, folder):
    return text.replace(f"{program}: ", "", 1).strip().replace(folder, "M")


@pytest.mark.slow
def test_fuzzed_checkpoints_are_named_alike_by_both_runtimes(runner, tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", str(1 << 28))
    seeds, rng, differ, named = _seeds(tmp_path / "seeds"), random.Random(35), [], 0
    for _ in range(CASES):
        blob = rng.choice(seeds)
        for _ in range(rng.randint(1, 3)):
            blob = checkpoint_cases.mutate_case(rng, blob)
        folder = write_tree(str(tmp_path / "work"), unpack(blob))
        argv = ["run", folder, "--random", "--shape", "x=1,3"]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(argv)
        proc = subprocess.run([str(runner), *argv], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL, errors="replace")
        py = (code, _line(err.getvalue(), "graphrun", folder))
        cc = (proc.returncode, _line(proc.stderr, "graphrun-cc", folder))
        if "M/variables/" in py[1] + cc[1]:
            named += 1
            # a known gap, until graphrun-cc holds string tensors (issue 34): graphrun reads an entry of
            # DT_STRING (enum 7) and finds a later fault, graphrun-cc refuses the dtype first
            if py != cc and not cc[1].endswith("dtype enum 7 (graphdef reads numeric and bool tensors)"):
                differ.append((py, cc))
    assert named > CASES // 2  # most mutations must reach the checkpoint, or the test tests little
    assert differ == []
