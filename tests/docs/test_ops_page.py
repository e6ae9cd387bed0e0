"""docs/ops.md is what tools/ops_page.py makes now of the op registry and graphrun-cc's kernel list."""

import importlib.util
import json
import subprocess

import pytest

from graphdef.ops import REGISTRY
from tests.docs.pages import ROOT


@pytest.fixture(scope="module")
def ops_page():
    """tools/ops_page.py as a module (tools/ is a folder of scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("ops_page", ROOT / "tools" / "ops_page.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def fresh(ops_page, cc_runner):
    return ops_page.page(cc_runner)


def test_the_committed_page_is_current(ops_page, fresh):
    committed = ops_page.PAGE.read_text() if ops_page.PAGE.exists() else ""
    problem = ops_page.stale(committed, fresh)
    assert problem is None, problem


def test_every_op_of_both_runtimes_has_a_row(ops_page, fresh, cc_runner):
    """A guard on the generator itself: a filter that dropped ops would leave a current but short page."""
    listing = json.loads(subprocess.run([str(cc_runner), "--list-kernels", "--json"], capture_output=True,
                                        text=True, timeout=60, check=True).stdout)
    kernels = {k["op"] for k in listing["kernels"] + listing["internal_kernels"]}
    assert set(ops_page._table_rows(fresh)) == set(REGISTRY) | kernels


def test_stale_names_the_rows_and_the_command(ops_page, fresh):
    edited = fresh.replace("| `MatMul` |", "| `MatMul` | x |", 1)
    message = ops_page.stale(edited, fresh)
    assert "MatMul" in message and ops_page.REGENERATE in message
    assert ops_page.stale(fresh, fresh) is None
