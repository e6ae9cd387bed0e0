"""graphrun serve in a subprocess for the tests: bound to 127.0.0.1 on free ports, stopped by SIGTERM.

The server runs in its own process (as users run it) so the tests can signal it, and so the real
clients' copies of the protocol messages never meet the server's in one process.
"""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest

import graphdef as tf
from graphdef._native import capi as libgraphrun
from tests.support.numerics_policy import assert_all_conform

ROOT = Path(__file__).resolve().parents[2]
START_SECONDS = 60
# graphrun serve's runtimes (graphdef/serving/runtime.py): graphrun-cc's kernels through
# libgraphrun.so, and graphdef's Session on the numpy engine
RUNTIMES = ["cc", "python"]


def ensure_library():
    """build/libgraphrun.so, built with `make cc` when missing; a failed build fails the test, never skips."""
    path = libgraphrun.library_path()
    if not path.exists():
        proc = subprocess.run(["make", "-s", "cc"], cwd=ROOT, capture_output=True, text=True, check=False)
        if proc.returncode != 0 or not path.exists():
            pytest.fail(f"`make cc` could not build {path}:\n" + (proc.stdout + proc.stderr)[-3000:])
    return path


class Served:
    def __init__(self, process, http, grpc, stderr_path, runtime=None):
        self.process, self.http, self.grpc, self.stderr_path = process, http, grpc, stderr_path
        self.runtime = runtime  # the --runtime it was started with, if any

    @property
    def url(self):
        return f"http://127.0.0.1:{self.http}"

    @property
    def grpc_target(self):
        return f"127.0.0.1:{self.grpc}"

    def stop(self, timeout=60):
        """SIGTERM, then the exit code (the server drains first)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError("graphrun serve did not stop within 60 s of SIGTERM") from None

    def log(self):
        return Path(self.stderr_path).read_text()


def start(model, tmp_path, *flags, env=None):
    """Starts `graphrun serve MODEL FLAGS...` (with `env` added to the environment) and waits for its ready line."""
    stderr_path = tmp_path / f"serve-{time.monotonic_ns()}.log"
    command = [sys.executable, "-c", "import sys; from graphdef.graphrun.cli import main; sys.exit(main())",
               "serve", str(model), "--port-http", "0", "--port-grpc", "0", *flags]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=open(stderr_path, "w"),
                               text=True, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    deadline = time.monotonic() + START_SECONDS
    line = ""
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if line.startswith("graphrun serve: ready") or not line:
            break
    if not line.startswith("graphrun serve: ready"):
        process.kill()
        raise AssertionError(f"graphrun serve did not start: {stderr_path.read_text()[-2000:]}")
    fields = dict(part.split("=") for part in line.split()[3:])
    runtime = flags[flags.index("--runtime") + 1] if "--runtime" in flags else None
    return Served(process, int(fields["http"]), int(fields["grpc"]), stderr_path, runtime)


def http(served, method, path, body=None, headers=None, timeout=30):
    """(status, headers, body bytes) of one plain HTTP call, as curl would make it."""
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    request = urllib.request.Request(served.url + path, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def session_answer(model, feeds, fetch):
    """The model run in process by graphdef's Session on the numpy engine (the server's python
    runtime), loaded as the server loads it (optimized at load, as tf.load does): the answer every
    protocol must give."""
    graph = tf.load(str(model))
    with tf.Session(graph=graph, engine="python") as session:
        return session.run(fetch, {f"{k}:0": v for k, v in feeds.items()})


def assert_served_answer(served, got, model, feeds, fetch):
    """What the server answered against the Session in process: its bits when the Python runtime
    served, the numerics policy's tolerance for the fetch when graphrun-cc's kernels did."""
    want = session_answer(model, feeds, fetch)
    got = np.asarray(got).reshape(want.shape)  # JSON answers come flat; the shape is checked where it is sent
    if served.runtime == "cc":
        assert_all_conform([got], [want], model, [fetch], who="graphrun serve --runtime cc and the Session")
    else:
        np.testing.assert_array_equal(got, want)


def write_model(path, build):
    """A .pb made with graphdef's graph API: build() adds the nodes to a fresh graph."""
    graph = tf.Graph()
    with graph.as_default():
        build()
    path.parent.mkdir(parents=True, exist_ok=True)
    tf.io.write_graph(graph, str(path.parent), path.name, as_text=False)
    return path


def slow_model(n=400, repeats=3):
    """x [?, 4] -> y = x, after `repeats` n x n matmuls it depends on: tens of ms per call, to fill queues."""
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    m = tf.fill([n, n], tf.reduce_mean(x))
    for i in range(repeats):
        m = tf.matmul(m, m) * np.float32(1.0 / n)
    tf.add(x, tf.reduce_mean(m) * np.float32(0.0), name="y")


def scaled_model(scale):
    """x [?, 4] -> y = x * scale: two versions with different scales tell which one answered."""
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    tf.multiply(x, tf.constant(np.float32(scale)), name="y")
