"""graphrun serve against clients that stop half way: a REST client that never reads its answer, one
that reads slowly but steadily, an idle keep-alive connection, connections past the limit, and gRPC
calls whose message never finishes arriving, from a live client and from a peer gone without closing.

Each is checked on the server's own state (its open file descriptors in /proc, its connection gauge
and counters in /metrics) and by another client being answered meanwhile and afterwards."""

import asyncio
import json
import os
import socket
import struct
import threading
import time

import grpc
import numpy as np
import pytest
from aiohttp import web

import graphdef as tf
from graphdef._proto import oip_pb2
from graphdef.serving import http_protocol
from graphdef.serving.metrics import Metrics
from tests.support import serve_helpers as helpers

pytestmark = pytest.mark.slow

TIMEOUT = 1.5  # --client-timeout for these servers: short, so the stalled clients are dropped quickly
ROWS = 1 << 21  # rows of the big answer: 32 MB of float32, far more than both sockets' buffers hold
BIG_BYTES = ROWS * 4 * 4
SLACK = 5.0  # seconds of scheduling noise allowed on a machine busy with other work
WRITE_TIMEOUTS = 'graphdef_serve_http_connections_dropped_total{reason="write_timeout"}'


def two_outputs():
    """x [?, 4] -> small = x + 1, and big = x broadcast over ROWS rows (32 MB), fetched only when asked."""
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    tf.add(x, np.float32(1.0), name="small")
    tf.multiply(x, tf.fill([ROWS, 4], np.float32(1.0)), name="big")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    # one runtime: what is under test is the connection handling, which both runtimes share
    helpers.ensure_library()
    folder = tmp_path_factory.mktemp("slow")
    model = helpers.write_model(folder / "two.pb", two_outputs)
    server = helpers.start(model, folder, "--runtime", "cc", "--client-timeout", str(TIMEOUT))
    yield server
    assert server.stop() == 0
    log = server.log()
    assert "Traceback" not in log, log[-3000:]


X = np.array([[1, 2, 3, 4]], np.float32)


def infer_body(output):
    return json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 4], "data": X.ravel().tolist()}],
                       "outputs": [{"name": output, "parameters": {"binary_data": True}}]}).encode()


def infer_head(length):
    return (f"POST /v2/models/two/infer HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


def assert_others_served(served):
    """Another client's request is answered, and right (x + 1 computed here)."""
    status, headers, answer = helpers.http(served, "POST", "/v2/models/two/infer", infer_body("small"))
    assert status == 200, answer
    split = int(headers["Inference-Header-Content-Length"])
    np.testing.assert_array_equal(np.frombuffer(answer[split:], np.float32).reshape(1, 4), X + 1)


def metrics(served):
    """The server's /metrics samples by name (labels included), read over a connection of its own."""
    text = helpers.http(served, "GET", "/metrics")[2].decode()
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
            for line in text.splitlines() if line and not line.startswith("#")}


def other_connections(served):
    """HTTP connections open besides the one asking /metrics."""
    return metrics(served)["graphdef_serve_http_connections"] - 1


def open_fds(served):
    return len(os.listdir(f"/proc/{served.process.pid}/fd"))


def sockets(served):
    """The server's open sockets, by inode: a count alone can stay level while an earlier test's
    connection closes as this one's opens."""
    folder = f"/proc/{served.process.pid}/fd"
    found = set()
    for fd in os.listdir(folder):
        try:
            target = os.readlink(f"{folder}/{fd}")
        except OSError:  # closed meanwhile
            continue
        if target.startswith("socket:"):
            found.add(target)
    return found


def accepted(served, before):
    """The sockets the server opened since `before` (sockets(served)), once there is one."""
    assert wait_until(lambda: sockets(served) - before, SLACK), "the server did not accept the connection"
    return sockets(served) - before


def wait_until(condition, seconds):
    """Polls `condition` until it holds (True) or `seconds` pass (False)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def connect(port, receive_buffer=None):
    sock = socket.socket()
    if receive_buffer is not None:  # set before connecting, so the kernel advertises a small window
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.settimeout(30)
    sock.connect(("127.0.0.1", port))
    return sock


def read_answer(sock, pause_every=None, pause=0.0):
    """(status, headers, body) of one HTTP answer, read whole; with `pause_every`, a pause of `pause`
    seconds after each so many body bytes."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"the server closed before its answer's headers: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = {k.lower(): v for k, v in (line.split(": ", 1) for line in lines[1:])}
    length, chunks, got, since_pause = int(headers["content-length"]), [body], len(body), len(body)
    while got < length:
        chunk = sock.recv(min(1 << 20, length - got))
        assert chunk, f"the server closed after {got} of {length} bytes"
        chunks.append(chunk)
        got += len(chunk)
        since_pause += len(chunk)
        if pause_every and since_pause >= pause_every:
            time.sleep(pause)
            since_pause = 0
    return int(lines[0].split(" ", 2)[1]), headers, b"".join(chunks)


def read_until_closed(sock, seconds):
    """How many bytes arrive before the server closes (or `seconds` pass: None)."""
    sock.settimeout(seconds)
    got = 0
    try:
        while True:
            chunk = sock.recv(1 << 20)
            if not chunk:
                return got
            got += len(chunk)
    except ConnectionResetError:
        return got
    except socket.timeout:
        return None


# -- REST ---------------------------------------------------------------------------------

def rss_mb(served):
    status = open(f"/proc/{served.process.pid}/status").read()
    return int(status.split("VmRSS:")[1].split()[0]) / 1024


def test_a_client_that_never_reads_its_answer_is_dropped_and_others_are_served(served):
    assert wait_until(lambda: other_connections(served) == 0, SLACK)
    fds, rss_after = open_fds(served), []
    for _ in range(4):  # again and again: what one stalled answer held must be given back
        dropped = metrics(served)[WRITE_TIMEOUTS]
        body = infer_body("big")
        sock = connect(served.http, receive_buffer=4096)
        sock.sendall(infer_head(len(body)) + body)
        started = time.monotonic()
        assert wait_until(lambda: other_connections(served) == 1, SLACK)
        assert_others_served(served)  # while the stalled answer waits, it holds no worker
        assert wait_until(lambda: metrics(served)[WRITE_TIMEOUTS] == dropped + 1, 3 * TIMEOUT + SLACK)
        held = time.monotonic() - started
        assert TIMEOUT * 0.9 < held < 3 * TIMEOUT + SLACK, held
        assert other_connections(served) == 0
        assert wait_until(lambda: open_fds(served) <= fds, SLACK), (open_fds(served), fds)
        # the client was cut off part way through the answer
        got = read_until_closed(sock, SLACK)
        assert got is not None and got < BIG_BYTES, got
        sock.close()
        rss_after.append(rss_mb(served))
    assert f"bytes waiting for it in {TIMEOUT:g} s (--client-timeout)" in served.log()
    # each stalled answer holds several copies of its 32 MB while it waits; none of it may stay (the
    # first rounds are left out: the allocator keeps some of the freed memory for the next answer)
    assert rss_after[-1] < rss_after[1] + BIG_BYTES / 2 ** 21, rss_after
    assert_others_served(served)


def test_a_client_reading_slowly_but_steadily_gets_its_whole_answer(served):
    body = infer_body("big")
    sock = connect(served.http, receive_buffer=65536)
    sock.sendall(infer_head(len(body)) + body)
    started = time.monotonic()
    # pauses shorter than the timeout, adding up to several timeouts: the deadline is on progress
    status, headers, answer = read_answer(sock, pause_every=BIG_BYTES // 6, pause=TIMEOUT * 0.6)
    assert time.monotonic() - started > 2 * TIMEOUT
    assert status == 200, answer[:300]
    split = int(headers["inference-header-content-length"])
    assert len(answer) - split == BIG_BYTES
    np.testing.assert_array_equal(np.frombuffer(answer[split:], np.float32).reshape(ROWS, 4)[::99991],
                                  np.broadcast_to(X, (ROWS, 4))[::99991])
    sock.close()


def test_an_idle_keep_alive_connection_is_closed_a_timeout_after_its_last_answer(served):
    sock = connect(served.http)
    request = b"GET /v2/health/live HTTP/1.1\r\nHost: test\r\n\r\n"
    sock.sendall(request)
    assert read_answer(sock)[0] == 200
    time.sleep(TIMEOUT / 2)
    sock.sendall(request)  # still open, and its deadline starts again from this answer
    assert read_answer(sock)[0] == 200
    answered = time.monotonic()
    assert read_until_closed(sock, TIMEOUT + SLACK) == 0
    assert TIMEOUT * 0.9 < time.monotonic() - answered < TIMEOUT + SLACK
    sock.close()
    assert wait_until(lambda: other_connections(served) == 0, SLACK)


class InProcess:
    """An asyncio loop on a thread of this process, for servers built here from the serving modules."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(60)

    def close(self):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def in_process():
    loop = InProcess()
    yield loop
    loop.close()


def test_connections_past_the_limit_are_answered_503_at_once(in_process):
    limit, served_metrics = 2, Metrics()

    async def live(request):
        return web.json_response({"live": True})

    async def start():
        app = web.Application()
        app.router.add_get("/live", live)
        runner = web.AppRunner(app, keepalive_timeout=60)
        await runner.setup()
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        site = http_protocol.Site(runner, sock, served_metrics, max_connections=limit)
        await site.start()
        return runner, sock.getsockname()[1]

    runner, port = in_process.run(start())
    sample = served_metrics.registry.get_sample_value
    request = b"GET /live HTTP/1.1\r\nHost: test\r\n\r\n"
    try:
        held = [connect(port) for _ in range(limit)]
        for sock in held:  # kept alive after their answers: they count against the limit
            sock.sendall(request)
            assert read_answer(sock)[0] == 200
        assert sample("graphdef_serve_http_connections") == limit
        refused = connect(port)
        refused.sendall(request)
        status, headers, answer = read_answer(refused)
        assert status == 503 and headers["retry-after"] == "1", answer
        assert json.loads(answer)["error"].startswith(
            f"the server has its limit of {limit} HTTP connections open (--max-connections)")
        assert read_until_closed(refused, SLACK) == 0  # and closed
        assert sample("graphdef_serve_http_connections_dropped_total", {"reason": "over_limit"}) == 1
        held.pop().close()
        assert wait_until(lambda: sample("graphdef_serve_http_connections") == limit - 1, SLACK)
        again = connect(port)
        again.sendall(request)
        assert read_answer(again)[0] == 200
        for sock in held + [refused, again]:
            sock.close()
        assert wait_until(lambda: sample("graphdef_serve_http_connections") == 0, SLACK)
        # a burst, all connected before any is answered: exactly `limit` of them are served
        burst = [connect(port) for _ in range(4 * limit)]
        statuses = []
        for sock in burst:
            sock.sendall(request)
            statuses.append(read_answer(sock)[0])
            sock.close()
        assert sorted(statuses) == [200] * limit + [503] * 3 * limit, statuses
    finally:
        in_process.run(runner.cleanup())


# -- gRPC ----------------------------------------------------------------------------------

LIVE = "/inference.GRPCInferenceService/ServerLive"
INFER = "/inference.GRPCInferenceService/ModelInfer"


def server_live(target):
    with grpc.insecure_channel(target) as channel:
        call = channel.unary_unary(LIVE, request_serializer=oip_pb2.ServerLiveRequest.SerializeToString,
                                   response_deserializer=oip_pb2.ServerLiveResponse.FromString)
        return call(oip_pb2.ServerLiveRequest(), timeout=30).live


def h2_frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def literal(name, value):
    """An HPACK header field, literal without indexing, new name, no Huffman coding."""
    return bytes([0, len(name)]) + name + bytes([len(value)]) + value


def call_opening(path):
    """An HTTP/2 connection's preface and settings, and a gRPC call's headers."""
    headers = (bytes([0x83, 0x86]) + literal(b":path", path.encode()) + literal(b":authority", b"test")
               + literal(b"content-type", b"application/grpc") + literal(b"te", b"trailers"))
    return b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + h2_frame(4, 0, 0) + h2_frame(1, 0x4, 1, headers)


def half_sent_call(path):
    """A call whose message stops after its first 10 bytes of the 1000 it says it has."""
    return call_opening(path) + h2_frame(0, 0, 1, b"\x00" + struct.pack(">I", 1000) + b"x" * 10)


def read_frames(sock, until, seconds, answer_pings):
    """Reads the server's HTTP/2 frames for up to `seconds`, ACKing its pings when `answer_pings`,
    until `until(kind, flags, stream)` is true (returns True) or the server closes (returns None)."""
    sock.settimeout(0.5)
    data, deadline = b"", time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            continue
        except ConnectionResetError:
            return None
        if not chunk:
            return None
        data += chunk
        while len(data) >= 9 and len(data) >= 9 + int.from_bytes(data[:3], "big"):
            length, kind, flags = int.from_bytes(data[:3], "big"), data[3], data[4]
            stream = struct.unpack(">I", data[5:9])[0] & 0x7FFFFFFF
            payload, data = data[9:9 + length], data[9 + length:]
            if kind == 4 and not flags & 1:
                sock.sendall(h2_frame(4, 1, 0))  # ACK its SETTINGS
            if kind == 6 and not flags & 1 and answer_pings:
                sock.sendall(h2_frame(6, 1, 0, payload))
            if until(kind, flags, stream):
                return True
    return False


def test_a_grpc_peer_gone_half_way_through_a_message_is_dropped_and_others_are_served(served):
    """A call whose message stops after 10 of its 1000 bytes, from a peer that answers no ping (gone
    without closing): the server drops the connection and its file descriptor."""
    before = sockets(served)
    sock = socket.create_connection(("127.0.0.1", served.grpc), timeout=10)
    sock.sendall(half_sent_call(INFER))
    started = time.monotonic()
    mine = accepted(served, before)
    assert server_live(served.grpc_target)
    assert_others_served(served)
    assert read_frames(sock, lambda *frame: False, 10 * TIMEOUT + SLACK, answer_pings=False) is None
    assert time.monotonic() - started < 10 * TIMEOUT + SLACK
    assert wait_until(lambda: not mine & sockets(served), SLACK), "the server kept the connection's socket"
    sock.close()
    assert server_live(served.grpc_target)


def never_sends(stop):
    """A request stream that sends nothing until `stop` is set, then ends."""
    stop.wait(60)
    yield from ()


def test_a_grpc_call_whose_message_never_comes_ends_at_the_client_timeout(served):
    """A live client (it answers pings) opens a call and never sends its message: the server ends the
    call with DEADLINE_EXCEEDED after --client-timeout, and answers others meanwhile."""
    timeouts = 'graphdef_serve_errors_total{kind="timeout",model="",protocol="oip-grpc"}'
    before = metrics(served).get(timeouts, 0.0)
    with grpc.insecure_channel(served.grpc_target) as channel:
        stalled = channel.stream_unary(INFER, request_serializer=oip_pb2.ModelInferRequest.SerializeToString,
                                       response_deserializer=oip_pb2.ModelInferResponse.FromString)
        started, stop = time.monotonic(), threading.Event()
        future = stalled.future(never_sends(stop))  # no deadline of its own: the server's is the only one
        try:
            assert server_live(served.grpc_target)
            assert_others_served(served)
            with pytest.raises(grpc.RpcError) as caught:
                future.result(timeout=TIMEOUT + SLACK)
            held = time.monotonic() - started
        finally:
            stop.set()
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED, caught.value.details()
    assert f"the request message did not arrive within {TIMEOUT:g} s (--client-timeout)" in caught.value.details()
    assert TIMEOUT * 0.9 < held < TIMEOUT + SLACK, held
    assert metrics(served)[timeouts] == before + 1


def test_a_live_grpc_client_stalled_half_way_through_a_message_is_ended(served):
    """A call whose message stops after 10 of its 1000 bytes, on a connection that answers pings:
    the server ends the call (trailers or a reset on its stream) at the client timeout."""
    timeouts = 'graphdef_serve_errors_total{kind="timeout",model="",protocol="oip-grpc"}'
    before = metrics(served).get(timeouts, 0.0)
    sock = socket.create_connection(("127.0.0.1", served.grpc), timeout=10)
    sock.sendall(half_sent_call(INFER))
    started = time.monotonic()
    assert server_live(served.grpc_target)

    def call_ended(kind, flags, stream):
        return stream == 1 and (kind == 3 or (kind == 1 and flags & 1))  # RST_STREAM, or HEADERS ending it
    assert read_frames(sock, call_ended, TIMEOUT + SLACK, answer_pings=True) is True
    assert TIMEOUT * 0.9 < time.monotonic() - started < TIMEOUT + SLACK
    sock.close()
    assert metrics(served)[timeouts] == before + 1
    assert_others_served(served)


def test_a_grpc_client_that_never_takes_its_answer_is_dropped(served):
    """A whole ModelInfer request for the 32 MB output, from a peer that answers pings but never opens
    its flow-control window: the answer waits in grpc's buffers, the call no longer counts, and the
    connection is closed as idle, its fd released. grpc's idle timer runs 10 client timeouts and
    starts again if a call came and went meanwhile, so this takes 20 (30 s here)."""
    before = sockets(served)
    request = oip_pb2.ModelInferRequest(model_name="two")
    request.inputs.add(name="x", datatype="FP32", shape=[1, 4])
    request.raw_input_contents.append(X.tobytes())
    request.outputs.add(name="big")
    message = request.SerializeToString()
    sock = socket.create_connection(("127.0.0.1", served.grpc), timeout=10)
    sock.sendall(call_opening(INFER) + h2_frame(0, 1, 1, b"\x00" + struct.pack(">I", len(message)) + message))
    started = time.monotonic()
    mine = accepted(served, before)
    assert_others_served(served)
    # 20 client timeouts on a quiet machine (29-33 s); 30 allowed, as a busy one delays grpc's timers
    assert read_frames(sock, lambda *frame: False, 30 * TIMEOUT + 2 * SLACK, answer_pings=True) is None
    assert time.monotonic() - started < 30 * TIMEOUT + 2 * SLACK
    assert wait_until(lambda: not mine & sockets(served), SLACK), "the server kept the connection's socket"
    sock.close()
    assert server_live(served.grpc_target)


def test_sigterm_is_not_held_up_by_stalled_clients(tmp_path):
    """A server asked to stop while one client does not read its answer and another has not sent its
    gRPC message exits 0 within the client timeouts, not the 30 s drain limit."""
    model = helpers.write_model(tmp_path / "two.pb", two_outputs)
    server = helpers.start(model, tmp_path, "--runtime", "cc", "--client-timeout", str(TIMEOUT))
    body = infer_body("big")
    reader = connect(server.http, receive_buffer=4096)
    reader.sendall(infer_head(len(body)) + body)
    assert wait_until(lambda: other_connections(server) == 1, SLACK)
    stop = threading.Event()
    with grpc.insecure_channel(server.grpc_target) as channel:
        stalled = channel.stream_unary(INFER, request_serializer=oip_pb2.ModelInferRequest.SerializeToString,
                                       response_deserializer=oip_pb2.ModelInferResponse.FromString)
        future = stalled.future(never_sends(stop))
        try:
            started = time.monotonic()
            assert server.stop() == 0
            assert time.monotonic() - started < 3 * TIMEOUT + SLACK
            assert future.exception(timeout=SLACK) is not None
        finally:
            stop.set()
    reader.close()
    assert "Traceback" not in server.log()


def test_max_connections_caps_both_protocols(tmp_path):
    """--max-connections 2: two keep-alive HTTP connections are served, a third is answered 503; two
    gRPC connections are served, a third is closed."""
    server = helpers.start(helpers.write_model(tmp_path / "two.pb", two_outputs), tmp_path, "--runtime", "cc",
                           "--max-connections", "2")
    request = b"GET /v2/health/live HTTP/1.1\r\nHost: test\r\n\r\n"
    held = [connect(server.http) for _ in range(2)]
    for sock in held:
        sock.sendall(request)
        assert read_answer(sock)[0] == 200
    refused = connect(server.http)
    refused.sendall(request)
    status, _, answer = read_answer(refused)
    assert status == 503 and "limit of 2 HTTP connections open (--max-connections)" in json.loads(answer)["error"]
    # channels of their own connections (by default, channels to one address share one)
    channels = [grpc.insecure_channel(server.grpc_target, options=[("grpc.use_local_subchannel_pool", 1)])
                for _ in range(3)]
    try:
        calls = [c.unary_unary(LIVE, request_serializer=oip_pb2.ServerLiveRequest.SerializeToString,
                               response_deserializer=oip_pb2.ServerLiveResponse.FromString) for c in channels]
        assert calls[0](oip_pb2.ServerLiveRequest(), timeout=30).live
        assert calls[1](oip_pb2.ServerLiveRequest(), timeout=30).live
        with pytest.raises(grpc.RpcError) as caught:
            calls[2](oip_pb2.ServerLiveRequest(), timeout=SLACK)
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE, caught.value.details()
    finally:
        for channel in channels:
            channel.close()
        for sock in held + [refused]:
            sock.close()
    assert server.stop() == 0
