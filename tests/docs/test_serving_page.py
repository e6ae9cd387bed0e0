"""The serving guide stays true: its curl commands and its client example, run as written against
`graphrun serve tests/models/mlp.pb` (on free ports instead of 8000 and 8001)."""

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from tests.docs.pages import DOCS, ROOT, blocks
from tests.support import serve_helpers as helpers

PAGE = (DOCS / "guide" / "serving.md").read_text()
MLP = ROOT / "tests" / "models" / "mlp.pb"
ROW = np.array([0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.1, 1.2, 1.3, 1.4, 1.5], np.float32)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """As the page runs it: the default runtime, which is cc once `make` has built the library."""
    helpers.ensure_library()
    server = helpers.start(MLP, tmp_path_factory.mktemp("serve"))
    assert "graphrun serve: runtime cc (" in server.log()
    server.runtime = "cc"
    yield server
    assert server.stop() == 0


def test_the_serve_commands_name_real_flags():
    from graphdef.graphrun.serve import build_parser
    lines = re.findall(r"^graphrun serve (.*?)(?:\s+#.*)?$", PAGE, re.M)
    assert lines
    for line in lines:
        build_parser().parse_args(line.split())


def test_the_curl_examples(served):
    block = next(b for b in blocks(PAGE, "sh") if "curl" in b)
    commands = re.split(r"\n(?=curl )", block.strip().replace("localhost:8000", f"127.0.0.1:{served.http}"))
    assert len(commands) == 2
    answers = [json.loads(subprocess.run(["bash", "-c", c], capture_output=True, text=True, timeout=60,
                                         check=True).stdout) for c in commands]
    for got in (answers[0]["outputs"][0]["data"], answers[1]["predictions"]):
        helpers.assert_served_answer(served, np.array(got, np.float32), MLP, {"x": ROW[None]}, "output/score:0")


def test_the_client_example(served, tmp_path):
    pytest.importorskip("tritonclient.grpc", reason="make test installs tritonclient (the oracle extra)")
    (block,) = [b for b in blocks(PAGE, "py") if "tritonclient" in b]
    script = tmp_path / "client.py"
    script.write_text(block.replace("localhost:8001", served.grpc_target).replace(
        "print(client", "np.save('out.npy', client"))
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    x = np.linspace(0, 1, 32, dtype=np.float32).reshape(2, 16)
    helpers.assert_served_answer(served, np.load(tmp_path / "out.npy"), MLP, {"x": x}, "output/score:0")


def test_serve_a_savedmodel(tmp_path, capsys, monkeypatch):
    """The page's recipe: convert a SavedModel into a repository's model.pb, then serve the repository."""
    import graphdef as tf
    from tests.support.graphrun_helpers import ok

    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        y = tf.matmul(x, tf.Variable(np.array([[1.0], [2.0]], np.float32), name="w"), name="y")
        init = tf.global_variables_initializer()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        tf.saved_model.simple_save(sess, str(tmp_path / "export" / "1"), inputs={"features": x},
                                   outputs={"scores": y})
    (block,) = [b for b in blocks(PAGE, "sh") if "graphrun convert" in b]
    convert, serve = [line.partition("#")[0].split() for line in block.strip().splitlines()]
    monkeypatch.chdir(tmp_path)
    ok(capsys, *convert[1:])
    assert serve[:2] == ["graphrun", "serve"]
    server = helpers.start(tmp_path / serve[2], tmp_path)
    try:
        status, _, body = helpers.http(server, "POST", "/v2/models/scorer/infer", {
            "inputs": [{"name": "features", "datatype": "FP32", "shape": [1, 2], "data": [1, 1]}]})
        assert status == 200, body
        assert json.loads(body)["outputs"][0]["data"] == [3.0]
    finally:
        assert server.stop() == 0
