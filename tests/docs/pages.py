"""The documentation's pages and their code blocks, for the tests of tests/docs."""

import os
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"


def pages():
    """README.md and every page of the site, as paths relative to the repository."""
    return [README.relative_to(ROOT)] + sorted(p.relative_to(ROOT) for p in DOCS.rglob("*.md"))


def blocks(text, language):
    """The bodies of the fenced blocks of `language` (```python, not ```py: that fence is how a page
    shows code that cannot run on its own)."""
    return re.findall(r"^```" + re.escape(language) + r"\n(.*?)^```", text, re.S | re.M)


def python_blocks():
    """(page, index, source) of every ```python block of every page."""
    return [(page, i, block) for page in pages()
            for i, block in enumerate(blocks((ROOT / page).read_text(), "python"))]


def samples(text):
    """{command: output} of the ```text blocks that show `$ command` followed by its output; a block
    may hold several commands, each followed by what it prints."""
    shown = {}
    for block in blocks(text, "text"):
        if not block.startswith("$ "):
            continue
        for command, output in re.findall(r"^\$ (.*)\n((?:(?!\$ ).*\n)*)", block, re.M):
            shown[command] = output
    return shown


def workdir(tmp_path):
    """A directory to run a page's code in: its writes land there, and the repository's files the pages
    name (`tests/models/mlp.pb`) are found through a link, as from the repository's root."""
    for name in ("tests", "examples"):
        os.symlink(ROOT / name, tmp_path / name)
    return tmp_path
