"""graphrun serve against hostile clients: slow and half-sent requests on raw sockets, bodies whose
Content-Length lies, oversized bodies, JSON of every wrong shape, the binary-data extension and gRPC
raw contents with lying sizes, model names with control characters.

Each is answered with its 4xx (or gRPC status) and one line naming the field, or, for a client that
never finishes its headers, a closed connection; the server answers a good request meanwhile and
afterwards, and its log holds no traceback and no 5xx. Both runtimes serve the same answers."""

import json
import socket
import time

import grpc
import numpy as np
import pytest

from graphdef._proto import oip_pb2, tfs_pb2
from tests.support import serve_helpers as helpers

pytestmark = pytest.mark.slow

MLP = helpers.ROOT / "tests" / "models" / "mlp.pb"
TIMEOUT = 1.5  # --client-timeout for these servers: short, so the slow clients are dropped quickly
MAX_BODY = 200_000  # --max-body-mb 0.2, in bytes (the server's MB is 2**20 bytes)


@pytest.fixture(scope="module", params=helpers.RUNTIMES)
def served(request, tmp_path_factory):
    helpers.ensure_library()
    server = helpers.start(MLP, tmp_path_factory.mktemp("hostile"), "--runtime", request.param,
                           "--client-timeout", str(TIMEOUT), "--max-body-mb", "0.2")
    yield server
    assert server.stop() == 0
    log = server.log()
    assert "Traceback" not in log, log[-3000:]
    statuses = [json.loads(line)["status"] for line in log.splitlines() if line.startswith("{")]
    assert not [s for s in statuses if str(s).startswith("5") or s == "INTERNAL"], statuses


def good_body():
    return {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 16], "data": list(range(16))}]}


def assert_still_serving(served):
    status, _, answer = helpers.http(served, "POST", "/v2/models/mlp/infer", good_body())
    assert status == 200, answer


def connect(served):
    sock = socket.create_connection(("127.0.0.1", served.http), timeout=10)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_all(sock, seconds=10):
    """Everything the server sends until it closes the connection (or `seconds` pass)."""
    sock.settimeout(seconds)
    chunks = []
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    except (socket.timeout, ConnectionResetError):
        pass
    return b"".join(chunks)


def status_and_error(raw):
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body[:int(dict(
        line.split(": ", 1) for line in head.decode().split("\r\n")[1:]).get("Content-Length", len(body))
    )])["error"] if body else ""


def post_head(path, length, extra=""):
    return (f"POST {path} HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n{extra}\r\n").encode()


# -- slow and half-open clients -----------------------------------------------------------

def test_a_client_sending_its_headers_byte_by_byte_is_closed_and_others_are_served(served):
    sock = connect(served)
    head = post_head("/v2/models/mlp/infer", 10)
    started = time.monotonic()
    closed_after = None
    for byte in head[:-4]:  # never the blank line that ends the headers
        try:
            sock.sendall(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            closed_after = time.monotonic() - started
            break
        assert_still_serving(served)  # the slow client holds no worker
        time.sleep(0.05)
        if time.monotonic() - started > 4 * TIMEOUT:
            break
    if closed_after is None:
        assert read_all(sock, 4 * TIMEOUT) == b""
        closed_after = time.monotonic() - started
    assert closed_after < 4 * TIMEOUT + 2, closed_after
    sock.close()


def test_a_client_that_connects_and_sends_nothing_is_closed(served):
    sock = connect(served)
    started = time.monotonic()
    assert read_all(sock, 4 * TIMEOUT + 2) == b""
    assert time.monotonic() - started < 4 * TIMEOUT + 2
    sock.close()
    assert_still_serving(served)


def test_a_body_shorter_than_its_content_length_is_408_after_the_timeout(served):
    sock = connect(served)
    sock.sendall(post_head("/v2/models/mlp/infer", 1000) + b'{"inputs": [')
    started = time.monotonic()
    status, error = status_and_error(read_all(sock, 4 * TIMEOUT + 4))
    assert status == 408 and "did not arrive within" in error and "--client-timeout" in error, error
    # answered after the timeout, and the connection closed soon after (aiohttp lingers 1 s)
    assert TIMEOUT * 0.8 < time.monotonic() - started < 4 * TIMEOUT + 4
    sock.close()
    assert_still_serving(served)


def test_a_body_cut_off_by_the_client_closing_is_a_clean_4xx_or_nothing(served):
    sock = connect(served)
    sock.sendall(post_head("/v2/models/mlp/infer", 1000) + b'{"inputs": [')
    sock.shutdown(socket.SHUT_WR)
    raw = read_all(sock)
    if raw:  # the client cannot read it any more, but nothing may be a 5xx
        assert status_and_error(raw)[0] == 400, raw
    sock.close()
    assert_still_serving(served)


def test_a_body_longer_than_its_content_length_is_400_in_one_line(served):
    body = json.dumps(good_body()).encode()
    sock = connect(served)
    sock.sendall(post_head("/v2/models/mlp/infer", 10) + body)
    # the declared 10 bytes are not JSON, and the rest is no HTTP request: either is answered first
    status, error = status_and_error(read_all(sock, 5))
    assert status == 400 and ("malformed JSON body" in error or "malformed HTTP request" in error), error
    assert "\n" not in error
    sock.close()
    assert_still_serving(served)


def test_an_oversized_content_length_is_413_before_the_body_is_sent(served):
    sock = connect(served)
    sock.sendall(post_head("/v2/models/mlp/infer", 10 ** 12))
    status, error = status_and_error(read_all(sock, 5))
    assert status == 413 and "over the limit" in error and "--max-body-mb" in error, error
    sock.close()


def test_an_oversized_chunked_body_is_413(served):
    sock = connect(served)
    head = (b"POST /v1/models/mlp:predict HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n"
            b"Content-Type: application/json\r\n\r\n")
    chunk = b"[" * 65536
    try:
        sock.sendall(head)
        for _ in range(MAX_BODY // len(chunk) + 2):
            sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
    status, error = status_and_error(read_all(sock, 5))
    assert status == 413 and "over the limit" in error, error
    sock.close()
    assert_still_serving(served)


# -- JSON of every wrong shape --------------------------------------------------------------

def oip(tensor):
    return {"inputs": [tensor]}


def x(**fields):
    return {"name": "x", "datatype": "FP32", "shape": [1, 16], "data": list(range(16)), **fields}


BAD_JSON = [
    ("deep nesting", "/v2/models/mlp/infer", b'{"inputs": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
     "nested too deeply"),
    ("deep nesting, TF Serving", "/v1/models/mlp:predict", b'{"instances": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
     "nested too deeply"),
    ("a number of 10^5 digits", "/v2/models/mlp/infer", b'{"inputs": [' + b"9" * 100_000 + b"]}",
     "malformed JSON body"),
    ("an integer out of range", "/v2/models/mlp/infer",
     oip(x(datatype="INT32", data=[2 ** 40] * 16)), "values out of the range of int32"),
    ("not an object", "/v2/models/mlp/infer", [1, 2, 3], "the JSON body must be an object"),
    ("not UTF-8", "/v2/models/mlp/infer", b'{"inputs": "\xff\xfe"}', "malformed JSON body"),
    ("inputs an object", "/v2/models/mlp/infer", {"inputs": {"x": [1]}}, "'inputs' must be a non-empty list"),
    ("a name not a string", "/v2/models/mlp/infer", oip(x(name=7)), "inputs[0] must be an object with a 'name'"),
    ("a shape as a string", "/v2/models/mlp/infer", oip(x(shape="1,16")), "shape must be a list of non-negative"),
    ("a negative dimension", "/v2/models/mlp/infer", oip(x(shape=[-1, 16])), "shape must be a list of non-negative"),
    ("a huge shape with no data", "/v2/models/mlp/infer", oip(x(shape=[10 ** 12, 10 ** 12], data=[])),
     "0 values given for shape"),
    ("a ragged tensor", "/v2/models/mlp/infer", oip(x(data=[[1, 2], [3]])), "3 values given for shape [1, 16]"),
    ("strings for numbers", "/v2/models/mlp/infer", oip(x(data=["1"] * 16)), "data holds str"),
    ("null data", "/v2/models/mlp/infer", oip(x(data=None)), "data holds NoneType"),
    ("a datatype not a string", "/v2/models/mlp/infer", oip(x(datatype=["FP32"])), "unknown datatype"),
    ("outputs not a list", "/v2/models/mlp/infer", {**oip(x()), "outputs": "y"}, "'outputs' must be a list"),
    ("instances and inputs", "/v1/models/mlp:predict", {"instances": [[0] * 16], "inputs": [[0] * 16]},
     "give exactly one of 'instances'"),
    ("neither", "/v1/models/mlp:predict", {"signature_name": ""}, "give exactly one of 'instances'"),
    ("instances an object", "/v1/models/mlp:predict", {"instances": {"x": [0] * 16}},
     "'instances' must be a non-empty list"),
    ("instances empty", "/v1/models/mlp:predict", {"instances": []}, "'instances' must be a non-empty list"),
    ("instances naming different inputs", "/v1/models/mlp:predict", {"instances": [{"x": [0] * 16}, {"y": [0] * 16}]},
     "every instance must name the same inputs"),
    ("an unknown input by name", "/v1/models/mlp:predict", {"inputs": {"\x1b[2Jz": [[0] * 16]}},
     "unknown input '\\x1b[2Jz'"),
    ("base64 in place of numbers", "/v1/models/mlp:predict", {"inputs": {"x": {"b64": "AAAA"}}},
     "objects are not supported"),
    ("a wrong signature", "/v1/models/mlp:predict", {"signature_name": "train\x07", "instances": [[0] * 16]},
     "unknown signature 'train\\x07'"),
    ("booleans in a float row", "/v1/models/mlp:predict", {"instances": [[True] * 16]}, None),
]


@pytest.mark.parametrize("name,path,body,message", BAD_JSON, ids=[b[0] for b in BAD_JSON])
def test_bad_json_is_400_naming_the_field(served, name, path, body, message):
    status, _, answer = helpers.http(served, "POST", path, body)
    if message is None:  # JSON true is the number 1 to numpy, as to TensorFlow Serving
        assert status in (200, 400), answer
        return
    error = json.loads(answer)["error"]
    assert status == 400, answer
    assert message in error, error
    assert "\n" not in error and "Traceback" not in error


# -- the binary-data extension with lying sizes ---------------------------------------------

def binary_request(size, blob, header_length=None, extra=None):
    header = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 16],
                                     "parameters": {"binary_data_size": size}}], **(extra or {})}).encode()
    length = str(len(header)) if header_length is None else header_length
    return header + blob, {"Inference-Header-Content-Length": length, "Content-Type": "application/octet-stream"}


BAD_BINARY = [
    ("size past the body", 64, bytes(60), None, "binary_data_size 64 does not fit the 60 binary bytes"),
    ("size short of the tensor", 32, bytes(64), None, "32 bytes of tensor data given"),
    ("bytes left over", 64, bytes(80), None, "16 bytes of binary data after the last input"),
    ("negative size", -4, bytes(64), None, "binary_data_size -4 does not fit"),
    ("size as a string", "64", bytes(64), None, "binary_data_size '64' does not fit"),
    ("header length past the body", 64, bytes(64), "999999", "Inference-Header-Content-Length is '999999'"),
    ("header length not a number", 64, bytes(64), "-5", "Inference-Header-Content-Length is '-5'"),
    ("header length cutting the JSON", 64, bytes(64), "10", "malformed JSON body"),
]


@pytest.mark.parametrize("name,size,blob,header_length,message", BAD_BINARY, ids=[b[0] for b in BAD_BINARY])
def test_binary_data_with_lying_sizes_is_400(served, name, size, blob, header_length, message):
    body, headers = binary_request(size, blob, header_length)
    status, _, answer = helpers.http(served, "POST", "/v2/models/mlp/infer", body, headers)
    assert status == 400, answer
    assert message in json.loads(answer)["error"]


# -- names with control characters, on both protocols -------------------------------------

def test_unknown_model_names_and_versions_are_404_with_control_characters_escaped(served):
    status, _, answer = helpers.http(served, "POST", "/v2/models/%1b%5b2Jevil/infer", good_body())
    assert status == 404 and "no model named '\\x1b[2Jevil'" in json.loads(answer)["error"], answer
    status, _, answer = helpers.http(served, "POST", "/v2/models/mlp/versions/7/infer", good_body())
    assert status == 404 and "model 'mlp' has no version 7" in json.loads(answer)["error"], answer
    status, _, answer = helpers.http(served, "GET", "/v1/models/" + "a" * 5000)
    error = json.loads(answer)["error"]
    assert status == 404 and "(5000 characters)" in error and len(error) < 400, error
    metrics = helpers.http(served, "GET", "/metrics")[2].decode()
    assert "evil" not in metrics and 'model="(unknown)"' in metrics


# -- gRPC --------------------------------------------------------------------------------

def model_infer(channel, request):
    call = channel.unary_unary("/inference.GRPCInferenceService/ModelInfer",
                               request_serializer=oip_pb2.ModelInferRequest.SerializeToString,
                               response_deserializer=oip_pb2.ModelInferResponse.FromString)
    return call(request, timeout=30)


def infer_request(model="mlp", raw=None, shape=(1, 16), version=""):
    request = oip_pb2.ModelInferRequest(model_name=model, model_version=version)
    request.inputs.add(name="x", datatype="FP32", shape=list(shape))
    if raw is not None:
        request.raw_input_contents.extend(raw)
    return request


BAD_GRPC = [
    ("raw contents too short", infer_request(raw=[bytes(63)]), grpc.StatusCode.INVALID_ARGUMENT,
     "input 'x': 63 bytes of tensor data given, shape [1, 16] of FP32 needs 64"),
    ("raw contents too long", infer_request(raw=[bytes(65)]), grpc.StatusCode.INVALID_ARGUMENT,
     "input 'x': 65 bytes of tensor data given"),
    ("more raw contents than inputs", infer_request(raw=[bytes(64), bytes(64)]), grpc.StatusCode.INVALID_ARGUMENT,
     "raw_input_contents has 2 entries for 1 inputs"),
    ("a huge shape", infer_request(raw=[bytes(64)], shape=(2 ** 40, 2 ** 20)), grpc.StatusCode.INVALID_ARGUMENT,
     "64 bytes of tensor data given"),
    ("an unknown model with control characters", infer_request(model="m\x1b]0;x\x07", raw=[bytes(64)]),
     grpc.StatusCode.NOT_FOUND, "no model named 'm\\x1b]0;x\\x07'"),
    ("a version not a number", infer_request(raw=[bytes(64)], version="1\x00"), grpc.StatusCode.NOT_FOUND,
     "has no version '1\\x00'"),
]


@pytest.mark.parametrize("name,request_,code,message", BAD_GRPC, ids=[b[0] for b in BAD_GRPC])
def test_bad_grpc_requests_get_their_status_and_one_line(served, name, request_, code, message):
    with grpc.insecure_channel(served.grpc_target) as channel:
        with pytest.raises(grpc.RpcError) as caught:
            model_infer(channel, request_)
    assert caught.value.code() == code, caught.value.details()
    assert message in caught.value.details() and "\n" not in caught.value.details()


def test_a_tensorflow_serving_tensor_whose_content_is_short_is_invalid_argument(served):
    request = tfs_pb2.PredictRequest()
    request.model_spec.name = "mlp"
    tensor = request.inputs["x"]
    tensor.dtype = 1  # DT_FLOAT
    tensor.tensor_shape.dim.add(size=1)
    tensor.tensor_shape.dim.add(size=16)
    tensor.tensor_content = bytes(60)
    with grpc.insecure_channel(served.grpc_target) as channel:
        call = channel.unary_unary("/tensorflow.serving.PredictionService/Predict",
                                   request_serializer=tfs_pb2.PredictRequest.SerializeToString,
                                   response_deserializer=tfs_pb2.PredictResponse.FromString)
        with pytest.raises(grpc.RpcError) as caught:
            call(request, timeout=30)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
    assert "input 'x'" in caught.value.details()


def test_a_grpc_peer_that_never_answers_is_dropped(served):
    """An HTTP/2 client that sends its preface and then nothing, answering no ping (a peer that went
    away without closing): the server closes the connection within 10 client timeouts."""
    sock = socket.create_connection(("127.0.0.1", served.grpc), timeout=10)
    sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))  # preface, SETTINGS
    started = time.monotonic()
    frames = read_all(sock, 10 * TIMEOUT + 10)
    assert time.monotonic() - started < 10 * TIMEOUT + 5
    assert frames[3] == 4  # the server's SETTINGS came first: it was a live HTTP/2 connection
    sock.close()


def test_a_grpc_message_over_the_limit_is_resource_exhausted_and_a_good_one_is_answered(served):
    with grpc.insecure_channel(served.grpc_target) as channel:
        with pytest.raises(grpc.RpcError) as caught:
            model_infer(channel, infer_request(raw=[bytes(MAX_BODY * 2)]))
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        answer = model_infer(channel, infer_request(raw=[np.arange(16, dtype=np.float32).tobytes()]))
    assert answer.model_name == "mlp" and len(answer.raw_output_contents) == len(answer.outputs) >= 1
    assert_still_serving(served)
