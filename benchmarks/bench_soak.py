"""graphrun serve soaked: mixed good, bad and oversized requests over both protocols for a long time,
with clients that disconnect half-way and clients that stall; the server's RSS and open file
descriptors sampled and printed every --sample-seconds.

    .venv/bin/python benchmarks/bench_soak.py [--minutes 30] [--model PATH] [--runtime cc|python]

The server is `graphrun serve` in its own process (tests/models/mlp.pb by default, so requests are
many and the server's own memory, not the model's, is what is measured), with a 1 MB body limit and
a 2 s client timeout. Sixteen clients on one asyncio loop send, in turn from a fixed seed:

    good-rest, good-grpc     a valid request: must be answered 200 / OK with the model's answer
    bad-rest, bad-grpc       a request with a wrong shape or dtype, bad JSON, unknown model: its 400/404
                             / INVALID_ARGUMENT/NOT_FOUND
    big-rest, big-grpc       a body over the limit: 413 / RESOURCE_EXHAUSTED
    cut-rest                 headers and half a body, then the client closes the socket
    slow-rest                headers sent byte by byte and never finished: the server must close it
    cancel-grpc              a call whose client gives up after 1 ms
    noread-rest              50 pipelined requests whose answers are not read: the server must close it
    stall-grpc               a call whose message never comes: DEADLINE_EXCEEDED from the server

At the end: every good request answered OK and every bad one its 4xx (nothing lost), and the drift of
RSS and descriptors from the first sample (taken after a warm-up minute) to the last. Exits 1 when
anything was lost or a slow client was not closed.
"""

import argparse
import asyncio
import json
import os
import pathlib
import random
import signal
import socket
import subprocess
import sys
import time

import aiohttp
import grpc
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphdef._proto import oip_pb2  # noqa: E402

MODEL = ROOT / "tests" / "models" / "mlp.pb"
CLIENTS = 16
CLIENT_TIMEOUT = 2.0
MAX_BODY = 1 << 20  # --max-body-mb 1
KINDS = ["good-rest", "good-grpc", "bad-rest", "bad-grpc", "big-rest", "big-grpc", "cut-rest", "slow-rest",
         "cancel-grpc", "noread-rest", "stall-grpc"]
WEIGHTS = [30, 30, 10, 10, 3, 3, 5, 1, 8, 1, 1]
INFER = "/inference.GRPCInferenceService/ModelInfer"


def start_server(model, runtime):
    command = [sys.executable, "-c", "import sys; from graphdef.graphrun.cli import main; sys.exit(main())",
               "serve", str(model), "--model-name", "m", "--port-http", "0", "--port-grpc", "0",
               "--max-body-mb", "1", "--client-timeout", str(CLIENT_TIMEOUT), "--max-batch-size", "4",
               "--max-queue", "1024", "--access-log", "-", *(["--runtime", runtime] if runtime else [])]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    line = process.stdout.readline()
    if not line.startswith("graphrun serve: ready"):
        process.kill()
        sys.exit(f"bench_soak: the server did not start ({line.strip()!r}): {process.stderr.read()[-2000:]}")
    fields = dict(part.split("=") for part in line.split()[3:])
    return process, int(fields["http"]), int(fields["grpc"])


def sample(pid):
    """(RSS in MB, open file descriptors) of a process (Linux's /proc)."""
    rss = 0.0
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


class Tally:
    def __init__(self):
        self.sent = {k: 0 for k in KINDS}
        self.as_expected = {k: 0 for k in KINDS}
        self.wrong = []  # (kind, what happened), for the report

    def record(self, kind, ok, what=""):
        self.sent[kind] += 1
        if ok:
            self.as_expected[kind] += 1
        elif len(self.wrong) < 1000:
            self.wrong.append((kind, what))


class Traffic:
    def __init__(self, http_port, grpc_port, spec):
        self.base = f"http://127.0.0.1:{http_port}"
        self.http_port = http_port
        self.grpc_port = grpc_port
        self.name, self.shape = spec
        self.row = np.linspace(-1, 1, int(np.prod(self.shape[1:])), dtype=np.float32).reshape([1] + self.shape[1:])
        self.answer = None  # the first good answer: every later one must equal it

    def good_json(self):
        return {"inputs": [{"name": self.name, "datatype": "FP32", "shape": list(self.row.shape),
                            "data": self.row.ravel().tolist()}]}

    def infer_request(self, raw, model="m"):
        request = oip_pb2.ModelInferRequest(model_name=model)
        request.inputs.add(name=self.name, datatype="FP32", shape=list(self.row.shape))
        request.raw_input_contents.append(raw)
        return request

    def check_answer(self, values):
        values = np.asarray(values, np.float32).ravel()
        if self.answer is None:
            self.answer = values
        return values.shape == self.answer.shape and np.array_equal(values, self.answer)

    async def good_rest(self, session, tally):
        async with session.post(self.base + "/v2/models/m/infer", json=self.good_json()) as response:
            body = await response.json()
        ok = response.status == 200 and self.check_answer(body["outputs"][0]["data"])
        tally.record("good-rest", ok, f"{response.status} {str(body)[:200]}")

    async def good_grpc(self, call, tally):
        try:
            response = await call(self.infer_request(self.row.tobytes()), timeout=30)
        except grpc.aio.AioRpcError as e:
            tally.record("good-grpc", False, f"{e.code().name}: {e.details()}")
            return
        tally.record("good-grpc", self.check_answer(np.frombuffer(response.raw_output_contents[0], np.float32)))

    async def bad_rest(self, session, tally, rng):
        bodies = [({"inputs": [{"name": self.name, "datatype": "FP32", "shape": [1, 3], "data": [1, 2, 3]}]}, 400),
                  (b'{"inputs": [' * 3, 400), ({"instances": "x"}, 400), (self.good_json(), 404)]
        body, status = rng.choice(bodies)
        path = "/v2/models/nope/infer" if status == 404 else \
            ("/v1/models/m:predict" if isinstance(body, dict) and "instances" in body else "/v2/models/m/infer")
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        async with session.post(self.base + path, data=data) as response:
            answer = await response.read()
        ok = response.status == status and "\n" not in json.loads(answer).get("error", "\n")
        tally.record("bad-rest", ok, f"{response.status} {answer[:200]!r}")

    async def bad_grpc(self, call, tally, rng):
        request, code = rng.choice([(self.infer_request(bytes(3)), grpc.StatusCode.INVALID_ARGUMENT),
                                    (self.infer_request(self.row.tobytes(), model="nope"), grpc.StatusCode.NOT_FOUND)])
        try:
            await call(request, timeout=30)
        except grpc.aio.AioRpcError as e:
            tally.record("bad-grpc", e.code() == code, f"{e.code().name}: {e.details()}")
            return
        tally.record("bad-grpc", False, "answered OK")

    async def big_rest(self, session, tally):
        async with session.post(self.base + "/v2/models/m/infer", data=bytes(MAX_BODY + 1)) as response:
            await response.read()
        tally.record("big-rest", response.status == 413, str(response.status))

    async def big_grpc(self, call, tally):
        try:
            await call(self.infer_request(bytes(MAX_BODY + 1)), timeout=30)
        except grpc.aio.AioRpcError as e:
            tally.record("big-grpc", e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, e.code().name)
            return
        tally.record("big-grpc", False, "answered OK")

    async def cut_rest(self, tally):
        _, writer = await asyncio.open_connection("127.0.0.1", self.http_port)
        body = json.dumps(self.good_json()).encode()
        writer.write(b"POST /v2/models/m/infer HTTP/1.1\r\nHost: soak\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body) + body[: len(body) // 2])
        await writer.drain()
        writer.transport.abort()  # gone without a word: a client that crashed
        tally.record("cut-rest", True)

    async def slow_rest(self, tally):
        reader, writer = await asyncio.open_connection("127.0.0.1", self.http_port)
        head = b"POST /v2/models/m/infer HTTP/1.1\r\nHost: soak\r\nContent-Length: 10\r\n"
        started = time.monotonic()
        closed = False
        for byte in head:
            try:
                writer.write(bytes([byte]))
                await writer.drain()
            except ConnectionError:
                closed = True
                break
            await asyncio.sleep(0.2)
            if time.monotonic() - started > 3 * CLIENT_TIMEOUT + 5:
                break
        if not closed:
            try:
                closed = await asyncio.wait_for(reader.read(), 3 * CLIENT_TIMEOUT) == b""
            except (asyncio.TimeoutError, ConnectionError):
                closed = False
        writer.transport.abort()
        tally.record("slow-rest", closed, f"still open after {time.monotonic() - started:.1f} s")

    async def noread_rest(self, tally):
        """50 pipelined requests whose answers are not read: the server closes the connection within a
        few client timeouts (for the unread answers, or as idle once they are all sent)."""
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", self.http_port))
        reader, writer = await asyncio.open_connection(sock=sock)
        body = json.dumps(self.good_json()).encode()
        request = (b"POST /v2/models/m/infer HTTP/1.1\r\nHost: soak\r\nContent-Type: application/json\r\n"
                   b"Content-Length: %d\r\n\r\n" % len(body) + body)
        started = time.monotonic()
        writer.write(request * 50)
        await asyncio.sleep(3 * CLIENT_TIMEOUT)  # not reading meanwhile
        try:
            while await asyncio.wait_for(reader.read(1 << 20), 3 * CLIENT_TIMEOUT):
                pass
            closed = True
        except ConnectionError:
            closed = True
        except asyncio.TimeoutError:
            closed = False
        writer.transport.abort()
        tally.record("noread-rest", closed, f"still open after {time.monotonic() - started:.1f} s")

    async def stall_grpc(self, channel, tally):
        """A call whose message never comes: DEADLINE_EXCEEDED from the server after --client-timeout."""
        stalled = channel.stream_unary(INFER, request_serializer=oip_pb2.ModelInferRequest.SerializeToString,
                                       response_deserializer=oip_pb2.ModelInferResponse.FromString)
        try:  # no request iterator: the call waits for writes that never come
            await stalled(timeout=3 * CLIENT_TIMEOUT + 5)  # the client's own deadline is later
        except grpc.aio.AioRpcError as e:
            tally.record("stall-grpc", e.code() == grpc.StatusCode.DEADLINE_EXCEEDED
                         and "did not arrive within" in (e.details() or ""), f"{e.code().name}: {e.details()}")
            return
        tally.record("stall-grpc", False, "answered OK")

    async def cancel_grpc(self, call, tally):
        try:
            await call(self.infer_request(self.row.tobytes()), timeout=0.001)
        except grpc.aio.AioRpcError as e:
            tally.record("cancel-grpc", e.code() in (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.OK), "")
            return
        tally.record("cancel-grpc", True)


async def soak(args, traffic, pid):
    tally = Tally()
    deadline = time.monotonic() + args.minutes * 60
    rows = []
    options = [("grpc.max_send_message_length", -1)]
    async with aiohttp.ClientSession() as session, \
            grpc.aio.insecure_channel(f"127.0.0.1:{traffic.grpc_port}", options=options) as channel:
        call = channel.unary_unary(INFER, request_serializer=oip_pb2.ModelInferRequest.SerializeToString,
                                   response_deserializer=oip_pb2.ModelInferResponse.FromString)

        async def client(i):
            rng = random.Random(args.seed * 1000 + i)
            kinds = [k for k in KINDS if k in args.kinds]
            weights = [w for k, w in zip(KINDS, WEIGHTS) if k in args.kinds]
            while time.monotonic() < deadline:
                kind = rng.choices(kinds, weights)[0]
                try:
                    if kind == "good-rest":
                        await traffic.good_rest(session, tally)
                    elif kind == "good-grpc":
                        await traffic.good_grpc(call, tally)
                    elif kind == "bad-rest":
                        await traffic.bad_rest(session, tally, rng)
                    elif kind == "bad-grpc":
                        await traffic.bad_grpc(call, tally, rng)
                    elif kind == "big-rest":
                        await traffic.big_rest(session, tally)
                    elif kind == "big-grpc":
                        await traffic.big_grpc(call, tally)
                    elif kind == "cut-rest":
                        await traffic.cut_rest(tally)
                    elif kind == "slow-rest":
                        await traffic.slow_rest(tally)
                    elif kind == "noread-rest":
                        await traffic.noread_rest(tally)
                    elif kind == "stall-grpc":
                        await traffic.stall_grpc(channel, tally)
                    else:
                        await traffic.cancel_grpc(call, tally)
                except (aiohttp.ClientError, ConnectionError, ValueError, KeyError) as e:
                    tally.record(kind, False, f"{type(e).__name__}: {e}")

        async def sampler():
            started = time.monotonic()
            print(f"{'minute':>6} {'requests':>9} {'not as expected':>15} {'RSS MB':>8} {'fds':>5}   load avg",
                  flush=True)
            while True:
                rss, fds = sample(pid)
                minute = (time.monotonic() - started) / 60
                rows.append((minute, rss, fds))
                wrong = sum(tally.sent.values()) - sum(tally.as_expected.values())
                print(f"{minute:>6.1f} {sum(tally.sent.values()):>9} {wrong:>15} {rss:>8.1f} {fds:>5}   "
                      f"{os.getloadavg()[0]:.1f}", flush=True)
                if time.monotonic() >= deadline:
                    return
                await asyncio.sleep(min(args.sample_seconds, max(0.0, deadline - time.monotonic())))

        await asyncio.gather(sampler(), *(client(i) for i in range(CLIENTS)))
    await asyncio.sleep(2 * CLIENT_TIMEOUT)  # the slow and cut connections the server still holds time out
    rss, fds = sample(pid)
    rows.append(((time.monotonic() - deadline) / 60 + args.minutes, rss, fds))
    return tally, rows


def _kinds(text):
    kinds = [k for k in text.split(",") if k]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(f"unknown kind(s) {', '.join(unknown)}; the kinds: {', '.join(KINDS)}")
    return kinds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--sample-seconds", type=float, default=60.0)
    parser.add_argument("--model", type=pathlib.Path, default=MODEL,
                        help="a frozen graph with one FP32 input [?, ...] (default tests/models/mlp.pb)")
    parser.add_argument("--runtime", choices=["cc", "python"])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kinds", type=_kinds, default=KINDS, metavar="KIND,...",
                        help="only these kinds of request, in their usual proportions (to find which one "
                             "a drift comes from); default all")
    args = parser.parse_args()
    from graphdef.serving.runtime import load_runtime
    spec = load_runtime(args.model, "python").inputs[0]
    process, http_port, grpc_port = start_server(args.model, args.runtime)
    try:
        traffic = Traffic(http_port, grpc_port, (spec.name, [1 if d is None else d for d in spec.shape]))
        tally, rows = asyncio.run(soak(args, traffic, process.pid))
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            code = "killed"
    stderr = process.stderr.read()

    print(f"\n{'kind':<12} {'sent':>9} {'as expected':>12}")
    for kind in KINDS:
        print(f"{kind:<12} {tally.sent[kind]:>9} {tally.as_expected[kind]:>12}")
    # the first minute warms the allocator and the caches up: drift is measured from the next sample
    base = next((r for r in rows if r[0] >= 1.0), rows[0])
    last = rows[-1]
    print(f"RSS {base[1]:.1f} MB at minute {base[0]:.1f} -> {last[1]:.1f} MB at the end: "
          f"drift {last[1] - base[1]:+.1f} MB ({(last[1] - base[1]) / base[1]:+.1%}); "
          f"open fds {base[2]} -> {last[2]} ({last[2] - base[2]:+d}); "
          f"server exit {code}")
    lost = sum(tally.sent.values()) - sum(tally.as_expected.values())
    for kind, what in tally.wrong[:10]:
        print(f"NOT AS EXPECTED {kind}: {what}")
    if "Traceback" in stderr:
        print("FAILED: a traceback in the server's log:\n" + stderr[-3000:])
        lost += 1
    print(f"nothing lost: {'yes' if lost == 0 else 'NO'} ({sum(tally.sent.values())} requests, {lost} not as expected)")
    return 0 if lost == 0 and code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
