"""Every ```python block of README.md and of the site's pages runs as written, on its own."""

import subprocess
import sys

import pytest

from tests.docs.pages import ROOT, pages, python_blocks, workdir

BLOCKS = python_blocks()


def test_the_pages_show_python():
    shown = {str(page) for page, _, _ in BLOCKS}
    for page in ("README.md", "docs/guide/python-api.md", "docs/guide/training.md", "docs/guide/control-flow.md"):
        assert page in shown, f"{page} should show the API in a ```python block"


@pytest.mark.parametrize("page,index,source", BLOCKS, ids=[f"{p}:{i}" for p, i, _ in BLOCKS])
def test_python_block_runs(page, index, source, tmp_path):
    script = tmp_path / "block.py"
    script.write_text(source)
    done = subprocess.run([sys.executable, str(script)], cwd=workdir(tmp_path), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, f"{page}: python block {index} failed:\n{done.stderr[-3000:]}"


def test_no_page_hides_python_in_an_unknown_fence():
    """A block meant to run is ```python; one that cannot run alone is ```py. Any other spelling of
    Python would silently escape the test above."""
    for page in pages():
        text = (ROOT / page).read_text()
        for fence in ("```python3", "```Python", "```pycon", "``` python"):
            assert fence not in text, f"{page} has a {fence} block: write ```python (run) or ```py (shown)"
