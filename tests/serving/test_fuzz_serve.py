"""The request fuzzer (fuzz/serving) can tell: a short run against the server as it is finds nothing
and reaches both good answers and refusals, and the same run against a server with a planted bug
(an unexpected exception for one shape of request) reports it as a 5xx finding."""

import argparse
import asyncio
import importlib
import itertools
import sys

import pytest

from tests.support import serve_helpers as helpers

pytestmark = pytest.mark.slow

sys.path.insert(0, str(helpers.ROOT / "fuzz" / "serving"))
fuzz_serve = importlib.import_module("fuzz_serve")
mutations = importlib.import_module("mutations")


def run(runs, seed=3):
    args = argparse.Namespace(runtime="python", timeout=10.0)
    cases = itertools.islice(mutations.cases(seed), runs)
    counts, findings, _, _ = asyncio.run(fuzz_serve.campaign(args, cases))
    return counts, findings


def test_a_short_run_is_clean_and_reaches_answers_and_refusals():
    counts, findings = run(400)
    assert findings == []
    assert counts.get("ok", 0) > 50 and counts.get("clean-4xx", 0) > 50, counts
    assert sum(counts.values()) == 400


def test_a_planted_bug_is_a_finding(monkeypatch):
    from graphdef.serving import rest, tensors
    real = tensors.parse_shape

    def broken(shape, where):
        if isinstance(shape, list) and len(shape) == 2 and shape[0] == 2:
            raise KeyError("planted")  # a handler's unexpected exception: a 500
        return real(shape, where)

    monkeypatch.setattr(rest, "parse_shape", broken)
    counts, findings = run(200)
    assert counts.get("5xx", 0) > 0, counts
    assert any(kind == "5xx" and "planted" in detail for kind, detail, _ in findings)
