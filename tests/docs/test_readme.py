"""The README stays a short front door whose tour runs as written, and whose links lead somewhere."""

import re
import subprocess
import sys

from tests.docs.pages import README, ROOT, blocks, samples, workdir

TEXT = README.read_text()


def test_the_readme_is_short():
    assert len(TEXT.splitlines()) <= 160, "the README is the front door; the guides are in docs/"


def test_the_tour_runs_in_every_runtime(tmp_path, cc_runner):
    """The tour's python block saves model.pb; the shell lines after it run that file in graphrun and
    graphrun-cc and print what the README shows."""
    tour = next(b for b in blocks(TEXT, "python") if "tf.save(" in b)
    cwd = workdir(tmp_path)
    done = subprocess.run([sys.executable, "-c", tour], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    shown = samples(TEXT)
    assert any(c.startswith("graphrun ") for c in shown) and any(c.startswith("build/graphrun-cc ") for c in shown)
    tools = {"graphrun": ROOT / ".venv" / "bin" / "graphrun", "build/graphrun-cc": cc_runner}
    for command, output in shown.items():
        tool, _, args = command.partition(" ")
        run = subprocess.run(f"{tools[tool]} {args}", shell=True, cwd=cwd, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, (command, run.stderr)
        assert run.stdout == output, command


def test_the_links_lead_to_files():
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", TEXT):
        assert not re.match(r"[a-z]+:", target), f"the README links outside the repository: {target}"
        assert (ROOT / target).exists(), f"the README links to {target}, which does not exist"


def test_the_readme_names_every_guide():
    for page in sorted((ROOT / "docs" / "guide").glob("*.md")):
        assert f"](docs/guide/{page.name})" in TEXT, f"the README does not link to docs/guide/{page.name}"
