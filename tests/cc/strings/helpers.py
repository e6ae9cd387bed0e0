"""Runs one model through graphrun (the Python runtime, as the oracle) and graphrun-cc."""

import os
import subprocess
import sys

GRAPHRUN = [sys.executable, "-c", "import sys; from graphdef.graphrun.cli import main; sys.exit(main(sys.argv[1:]))"]


def run(command, *args, env=None):
    """(exit code, stdout bytes, stderr text) of one runner."""
    full_env = dict(os.environ, GRAPHDEF_ENGINE="python", **(env or {}))
    proc = subprocess.run([*command, *map(str, args)], capture_output=True, timeout=300, env=full_env)
    assert proc.returncode >= 0, f"{command[0]} died with signal {-proc.returncode}"
    return proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "backslashreplace")


def both(runner, *args, env=None):
    """graphrun's and graphrun-cc's results for `run *args`; their one error line without its program name."""
    py = run(GRAPHRUN, "run", *args, env=env)
    cc = run([str(runner)], "run", *args, env=env)
    return _unprefixed(py, "graphrun: "), _unprefixed(cc, "graphrun-cc: ")


def _unprefixed(result, prefix):
    code, out, err = result
    if err:
        assert err.startswith(prefix) and err.count("\n") == 1 and "Traceback" not in err, err[-2000:]
        err = err[len(prefix):]
    return code, out, err


def same(runner, *args, env=None):
    """Both runners give the same exit code, stdout and error line; returns graphrun-cc's."""
    py, cc = both(runner, *args, env=env)
    assert cc == py, f"graphrun-cc {cc!r}\ngraphrun    {py!r}"
    return cc
