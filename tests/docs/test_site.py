"""The site (mkdocs.yml, docs/) holds together: every page is in the nav, every nav entry is a page,
nothing is fetched from elsewhere, and the strict build passes where mkdocs is installed."""

import re
import subprocess
import sys

import pytest

from tests.docs.pages import DOCS, ROOT

CONFIG = (ROOT / "mkdocs.yml").read_text()
NAV = re.findall(r"^\s+- (?:[^:\n]+: )?(\S+\.md)\s*$", CONFIG.partition("\nnav:\n")[2], re.M)


def test_every_page_is_in_the_nav():
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(set(NAV)) == sorted(NAV), "a page is in the nav twice"
    assert [p for p in pages if p not in NAV] == [], "pages the nav does not reach"


def test_every_nav_entry_is_a_page():
    assert "index.md" in NAV
    assert [p for p in NAV if not (DOCS / p).exists()] == [], "nav entries with no page behind them"


def test_the_site_works_offline():
    assert re.search(r"^  font: false$", CONFIG, re.M), "no web fonts: the built site must work offline"
    for key in ("analytics:", "extra_javascript:", "extra_css:", "social"):
        assert key not in CONFIG, f"mkdocs.yml has {key}: the built site must fetch nothing from elsewhere"
    assert re.search(r"^strict: true$", CONFIG, re.M)


def test_the_root_files_are_included_not_copied():
    for page, root_file in (("contributing.md", "CONTRIBUTING.md"), ("changelog.md", "CHANGELOG.md")):
        assert (DOCS / page).read_text().strip() == f'--8<-- "{root_file}"'
        assert (ROOT / root_file).exists()


def test_the_pages_name_no_machine_paths():
    for page in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", *DOCS.rglob("*.md")]:
        text = page.read_text()
        for path in ("/home/", "/root/", "/tmp/"):
            assert path not in text, f"{page.relative_to(ROOT)} names {path}"


def test_the_strict_build_passes(tmp_path):
    pytest.importorskip("mkdocs", reason="`make docs` installs the docs extra")
    pytest.importorskip("material", reason="`make docs` installs the docs extra")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env={"NO_MKDOCS_2_WARNING": "1",
                                                                                      "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").exists()
