"""graphrun serve under trouble: bad requests, batching, overload, a new model version, metrics,
the access log and SIGTERM, with each runtime serving. Plain HTTP calls (urllib) and tritonclient's
gRPC client."""

import concurrent.futures
import functools
import json
import shutil
import time

import numpy as np
import pytest

from tests.support import serve_helpers as helpers

pytestmark = pytest.mark.slow

MLP = helpers.ROOT / "tests" / "models" / "mlp.pb"
grpcclient = pytest.importorskip("tritonclient.grpc", reason="make test installs tritonclient (the oracle extra)")

# A model slow enough that requests queue behind a running one: graphrun-cc's matrix products are
# many times faster than the Session's, so it gets larger ones.
SLOW = {"python": helpers.slow_model, "cc": functools.partial(helpers.slow_model, n=1000)}


@pytest.fixture(params=helpers.RUNTIMES)
def runtime(request):
    helpers.ensure_library()
    return request.param


def start_slow(tmp_path, runtime, *flags):
    model = helpers.write_model(tmp_path / "slow.pb", SLOW[runtime])
    return helpers.start(model, tmp_path, "--runtime", runtime, *flags)


def infer_body(data, name="x", datatype="FP32", shape=None):
    data = np.asarray(data)
    return {"inputs": [{"name": name, "datatype": datatype, "shape": list(data.shape if shape is None else shape),
                        "data": data.ravel().tolist()}]}


@pytest.fixture(scope="module", params=helpers.RUNTIMES)
def served(request, tmp_path_factory):
    helpers.ensure_library()
    server = helpers.start(MLP, tmp_path_factory.mktemp("serve"), "--max-body-mb", "0.05", "--runtime", request.param)
    yield server
    assert server.stop() == 0


BAD_REQUESTS = [
    ("unknown input", infer_body(np.zeros((1, 16)), name="images"), "unknown input 'images'"),
    ("wrong datatype", infer_body(np.zeros((1, 16), np.int32), datatype="INT32"), "input 'x': datatype INT32"),
    ("wrong shape", infer_body(np.zeros((1, 15))), "input 'x': shape [1, 15] given, the model expects [?, 16]"),
    ("too few values", infer_body(np.zeros(10), shape=[1, 16]), "input 'x': 10 values given for shape [1, 16]"),
    ("string values", {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 1], "data": ["a"]}]},
     "input 'x': data holds str"),
    ("unknown datatype", infer_body(np.zeros((1, 16)), datatype="FP128"), "input 'x': unknown datatype 'FP128'"),
    ("unknown output", {**infer_body(np.zeros((1, 16))), "outputs": [{"name": "nope"}]}, "unknown output 'nope'"),
    ("no inputs", {"inputs": []}, "'inputs' must be a non-empty list"),
]


@pytest.mark.parametrize("name,body,message", BAD_REQUESTS, ids=[b[0] for b in BAD_REQUESTS])
def test_a_bad_oip_request_is_400_naming_the_problem(served, name, body, message):
    status, _, answer = helpers.http(served, "POST", "/v2/models/mlp/infer", body)
    assert status == 400, answer
    assert message in json.loads(answer)["error"]


def test_malformed_json_and_bad_tensor_bytes_are_400_and_an_oversized_body_413(served):
    status, _, answer = helpers.http(served, "POST", "/v2/models/mlp/infer", b'{"inputs": [')
    assert status == 400 and "malformed JSON" in json.loads(answer)["error"]
    status, _, answer = helpers.http(served, "POST", "/v1/models/mlp:predict", b'{"instances": ' + b"[" * 20000)
    assert status == 400 and "malformed JSON" in json.loads(answer)["error"]
    header = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 16],
                                     "parameters": {"binary_data_size": 60}}]}).encode()
    status, _, answer = helpers.http(served, "POST", "/v2/models/mlp/infer", header + bytes(60),
                                     {"Inference-Header-Content-Length": str(len(header))})
    assert status == 400 and "input 'x': 60 bytes of tensor data given" in json.loads(answer)["error"]
    status, _, answer = helpers.http(served, "POST", "/v2/models/mlp/infer", header + bytes(30),
                                     {"Inference-Header-Content-Length": str(len(header))})
    assert status == 400 and "binary_data_size 60" in json.loads(answer)["error"]
    status, _, answer = helpers.http(served, "POST", "/v2/models/mlp/infer", infer_body(np.zeros((2000, 16))))
    assert status == 413 and "over the limit" in json.loads(answer)["error"]
    status, _, answer = helpers.http(served, "POST", "/v1/models/mlp:predict", {"instances": [[1.0] * 15]})
    assert status == 400 and "input 'x': shape [1, 15]" in json.loads(answer)["error"]
    status, _, answer = helpers.http(served, "POST", "/v1/models/mlp:predict", {"inputs": {"images": [[0.0] * 16]}})
    assert status == 400 and "unknown input 'images'" in json.loads(answer)["error"]
    status, _, answer = helpers.http(served, "POST", "/v2/models/nope/infer", infer_body(np.zeros((1, 16))))
    assert status == 404 and "no model named 'nope'" in json.loads(answer)["error"]
    # and the server still answers a good request right
    x = np.full((1, 16), 0.5, np.float32)
    status, _, answer = helpers.http(served, "POST", "/v2/models/mlp/infer", infer_body(x))
    assert status == 200
    got = np.array(json.loads(answer)["outputs"][0]["data"], np.float32)
    helpers.assert_served_answer(served, got, MLP, {"x": x}, "output/score:0")


def test_a_bad_grpc_request_is_invalid_argument_naming_the_input(served):
    from tritonclient.utils import InferenceServerException
    client = grpcclient.InferenceServerClient(served.grpc_target)
    tensor = grpcclient.InferInput("x", [1, 15], "FP32")
    tensor.set_data_from_numpy(np.zeros((1, 15), np.float32))
    with pytest.raises(InferenceServerException) as error:
        client.infer("mlp", [tensor])
    assert "INVALID_ARGUMENT" in error.value.status() and "input 'x': shape [1, 15]" in error.value.message()


def test_metrics_and_access_log(served):
    helpers.http(served, "POST", "/v2/models/mlp/infer", infer_body(np.zeros((1, 16), np.float32)))
    helpers.http(served, "POST", "/v2/models/mlp/infer", infer_body(np.zeros((1, 15), np.float32)))
    status, headers, body = helpers.http(served, "GET", "/metrics")
    text = body.decode()
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    assert 'graphdef_serve_requests_total{code="200",model="mlp",protocol="oip-rest"}' in text
    assert 'graphdef_serve_errors_total{kind="invalid_argument",model="mlp",protocol="oip-rest"}' in text
    assert 'graphdef_serve_request_seconds_bucket{le="+Inf",model="mlp",protocol="oip-rest"}' in text
    assert 'graphdef_serve_batch_rows_count{model="mlp"}' in text
    assert 'graphdef_serve_queue_depth{model="mlp",version="1"}' in text
    entries = [json.loads(line) for line in served.log().splitlines() if line.startswith("{")]
    assert any(e["status"] == 400 and e["path"] == "/v2/models/mlp/infer" and e["error"] == "invalid_argument"
               for e in entries)
    assert all({"time", "protocol", "model", "status", "ms"} <= set(e) for e in entries)


def _post_many(served, bodies, workers):
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda b: helpers.http(served, "POST", "/v2/models/slow/infer", b), bodies))


def test_dynamic_batching_stacks_requests_and_splits_the_answers(tmp_path, runtime):
    server = start_slow(tmp_path, runtime, "--max-batch-size", "8", "--max-queue-delay-ms", "50", "--workers", "1")
    try:
        rows = [np.full((1, 4), i, np.float32) for i in range(16)]
        answers = _post_many(server, [infer_body(r) for r in rows], 16)
        for row, (status, _, body) in zip(rows, answers):
            assert status == 200, body
            np.testing.assert_array_equal(np.array(json.loads(body)["outputs"][0]["data"], np.float32), row.ravel())
        text = helpers.http(server, "GET", "/metrics")[2].decode()
        count = float(next(line.split()[-1] for line in text.splitlines()
                           if line.startswith('graphdef_serve_batch_rows_count{model="slow"}')))
        assert count < 16, "16 requests arriving together ran as 16 batches: nothing was stacked"
    finally:
        assert server.stop() == 0


def test_several_workers_answer_concurrent_requests_each_with_its_own(tmp_path, runtime):
    """Three workers (for cc three loads of the model, one OpenMP thread each) under 24 requests at once: every
    answer is its own request's (the slow model's y is its x, plus 0 * a result a race would make NaN)."""
    server = start_slow(tmp_path, runtime, "--workers", "3")
    try:
        rows = [np.full((1, 4), i, np.float32) for i in range(24)]
        answers = _post_many(server, [infer_body(r) for r in rows], 24)
        for row, (status, _, body) in zip(rows, answers):
            assert status == 200, body
            np.testing.assert_array_equal(np.array(json.loads(body)["outputs"][0]["data"], np.float32), row.ravel())
    finally:
        assert server.stop() == 0
    how = {"cc": "3 batches at once, each on a load of its own with 1 OpenMP thread",
           "python": "3 batches at once (graphdef's Session per worker thread)"}[runtime]
    assert f"model slow version 1 runs {how}" in server.log()


def test_several_cc_workers_give_the_sessions_answers(tmp_path):
    """The MLP from eight clients at once on two loads: each answer within the numerics policy of the Session's."""
    helpers.ensure_library()
    server = helpers.start(MLP, tmp_path, "--runtime", "cc", "--workers", "2")
    server.runtime = "cc"
    rng = np.random.default_rng(21)
    rows = [rng.standard_normal((1 + k % 3, 16)).astype(np.float32) for k in range(32)]
    try:
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda r: helpers.http(server, "POST", "/v2/models/mlp/infer", infer_body(r)),
                                    rows))
        for row, (status, _, body) in zip(rows, answers):
            assert status == 200, body
            got = np.array(json.loads(body)["outputs"][0]["data"], np.float32)
            helpers.assert_served_answer(server, got, MLP, {"x": row}, "output/score:0")
    finally:
        assert server.stop() == 0


def test_a_full_queue_answers_429_and_the_rest_are_served(tmp_path, runtime):
    server = start_slow(tmp_path, runtime, "--max-queue", "1", "--workers", "1")
    try:
        answers = _post_many(server, [infer_body(np.ones((1, 4), np.float32))] * 12, 12)
        statuses = sorted(status for status, _, _ in answers)
        assert set(statuses) == {200, 429}, statuses
        assert all("overloaded" in json.loads(body)["error"] for status, _, body in answers if status == 429)
    finally:
        assert server.stop() == 0


def test_a_new_version_in_the_repository_is_served_without_dropping_requests(tmp_path, runtime):
    repository = tmp_path / "models"
    helpers.write_model(repository / "scale" / "1" / "model.pb", lambda: helpers.scaled_model(2.0))
    server = helpers.start(repository, tmp_path, "--poll-interval", "0.2", "--runtime", runtime)
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    answers = []
    try:
        def call():
            status, _, body = helpers.http(server, "POST", "/v2/models/scale/infer", infer_body(x))
            answers.append((status, json.loads(body)))
            return answers[-1]

        assert call()[1]["model_version"] == "1"
        staged = helpers.write_model(tmp_path / "staging" / "model.pb", lambda: helpers.scaled_model(3.0))
        (repository / "scale" / "2").mkdir()
        shutil.move(staged, repository / "scale" / "2" / "model.pb")
        deadline = time.monotonic() + 30
        while call()[1].get("model_version") != "2" and time.monotonic() < deadline:
            pass
        assert answers[-1][1]["model_version"] == "2", "version 2 was not picked up within 30 s"
        for status, body in answers:
            assert status == 200, body
            scale = {"1": 2.0, "2": 3.0}[body["model_version"]]
            np.testing.assert_array_equal(np.array(body["outputs"][0]["data"], np.float32), (x * scale).ravel())
        meta = json.loads(helpers.http(server, "GET", "/v2/models/scale")[2])
        assert "2" in meta["versions"]
    finally:
        assert server.stop() == 0


def test_sigterm_answers_every_request_already_received(tmp_path, runtime):
    server = start_slow(tmp_path, runtime, "--workers", "1")
    rows = [np.full((1, 4), i, np.float32) for i in range(6)]
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        futures = [pool.submit(helpers.http, server, "POST", "/v2/models/slow/infer", infer_body(r)) for r in rows]
        time.sleep(0.5)  # all six are received; a few are still queued behind the one worker
        assert server.stop() == 0
        answers = [f.result() for f in futures]
    for row, (status, _, body) in zip(rows, answers):
        assert status == 200, body
        np.testing.assert_array_equal(np.array(json.loads(body)["outputs"][0]["data"], np.float32), row.ravel())
    assert "draining" in server.log() and "stopped" in server.log()


def test_a_model_only_python_runs_is_served_by_python_saying_so(tmp_path):
    """By default (cc), a model graphrun-cc refuses (float16, a dtype it has no type for) falls back
    to the Python runtime with one line naming the model and why; --runtime cc refuses to start."""
    helpers.ensure_library()
    model = helpers.write_model(tmp_path / "half.pb", lambda: helpers.tf.cast(
        helpers.tf.placeholder(helpers.tf.float32, [None, 4], name="x") * np.float32(2), helpers.tf.float16, name="y"))
    server = helpers.start(model, tmp_path)
    try:
        x = np.float32([[0.5, 1, 2, 3]])
        status, _, body = helpers.http(server, "POST", "/v2/models/half/infer", infer_body(x))
        assert status == 200, body
        output = json.loads(body)["outputs"][0]
        assert output["datatype"] == "FP16"
        np.testing.assert_array_equal(np.array(output["data"], np.float16), (x * 2).astype(np.float16).ravel())
    finally:
        assert server.stop() == 0
    assert "graphrun serve: runtime cc (" in server.log()
    assert f"{model}: served by the Python runtime: graphrun-cc cannot run it:" in server.log()
    assert "(graphdef-python, batching off)" in server.log()
    with pytest.raises(AssertionError, match="(?i)half|float16"):
        helpers.start(model, tmp_path, "--runtime", "cc")


def test_without_the_library_python_serves_saying_why(tmp_path):
    server = helpers.start(MLP, tmp_path, env={"GRAPHDEF_LIBGRAPHRUN": str(tmp_path / "missing.so")})
    try:
        x = np.full((1, 16), 0.25, np.float32)
        status, _, body = helpers.http(server, "POST", "/v2/models/mlp/infer", infer_body(x))
        assert status == 200, body
        server.runtime = "python"
        helpers.assert_served_answer(server, json.loads(body)["outputs"][0]["data"], MLP, {"x": x}, "output/score:0")
    finally:
        assert server.stop() == 0
    assert (f"graphrun serve: runtime python (graphdef's Session): the C++ runtime is not available: "
            f"$GRAPHDEF_LIBGRAPHRUN names {tmp_path / 'missing.so'}, which is not there") in server.log()
    assert "(graphdef-python, batching off)" in server.log()
