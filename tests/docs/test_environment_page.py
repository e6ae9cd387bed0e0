"""docs/environment.md names every GRAPHDEF_* and GRAPHRUN_* variable the sources read, and no other."""

import re

from tests.docs.pages import DOCS, ROOT

PAGE = DOCS / "environment.md"
NAME = r"(?:GRAPHDEF|GRAPHRUN)_[A-Z0-9_]*[A-Z0-9]"
# A variable is read through a string literal holding its name ("GRAPHDEF_ENGINE", or the start of an
# error text such as "GRAPHDEF_MAX_WHILE_ITERATIONS="); the C API's macros and enum values
# (GRAPHRUN_OK, GRAPHRUN_C_H_) and generated protobuf names never stand in quotes.
QUOTED = re.compile(r"[\"'](" + NAME + r")(?=[\"'=])")
SOURCES = ("graphdef", "runner", "fuzz", "packaging", "benchmarks")
SUFFIXES = {".py", ".cc", ".h", ".c"}


def _source_files():
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            parts = path.relative_to(ROOT).parts
            if "third_party" in parts or "__pycache__" in parts or path.name.endswith("_pb2.py"):
                continue
            yield path


def read_by_the_code():
    """{variable: the first file that reads it}."""
    found = {}
    for path in _source_files():
        for name in QUOTED.findall(path.read_text(errors="replace")):
            found.setdefault(name, str(path.relative_to(ROOT)))
    return found


def documented():
    return set(re.findall(r"`(" + NAME + r")`", PAGE.read_text()))


def test_the_scan_finds_the_known_readers():
    """A guard on the scan itself: a regex that stopped matching would make the tests below vacuous."""
    found = read_by_the_code()
    for name in ("GRAPHDEF_ENGINE", "GRAPHDEF_MAX_TENSOR_BYTES", "GRAPHRUN_CC_OPTIMIZE", "GRAPHRUN_CC_NO_DNNL"):
        assert name in found, f"the scan no longer finds {name}"
    for name in ("GRAPHRUN_OK", "GRAPHRUN_C_H_", "GRAPHRUN_INLINE"):
        assert name not in found, f"{name} is not an environment variable"


def test_every_variable_the_code_reads_is_documented():
    missing = {name: where for name, where in read_by_the_code().items() if name not in documented()}
    assert not missing, "docs/environment.md does not document: " + ", ".join(
        f"{name} (read in {where})" for name, where in sorted(missing.items()))


def test_the_page_documents_only_variables_the_code_reads():
    stale = documented() - set(read_by_the_code())
    assert not stale, "docs/environment.md documents variables nothing reads: " + ", ".join(sorted(stale))
