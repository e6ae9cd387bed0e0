"""The request fuzzer of graphrun serve: mutated requests of both protocols against the server in process.

    .venv/bin/python fuzz/serving/fuzz_serve.py --runs N [--seed S] [--out DIR] [--runtime cc|python]
    .venv/bin/python fuzz/serving/fuzz_serve.py --replay DIR/findings/*.case

The server (graphdef/serving, tests/models/mlp.pb) and the clients (aiohttp's and grpc.aio's) share
one event loop; eight clients send the cases of fuzz/serving/mutations.py from a fixed seed. Each
answer is classed:

    ok            2xx / gRPC OK
    clean-4xx     a 4xx with a one-line JSON error / a gRPC status other than INTERNAL or UNKNOWN with
                  one line of details
  findings:
    5xx           an HTTP 5xx, gRPC INTERNAL or UNKNOWN
    dirty-4xx     a 4xx whose body is not {"error": one line}, or gRPC details of several lines
    traceback     a log record carrying an exception (or at ERROR) while the case ran
    hang          no answer within --timeout seconds
    lost          the connection dropped without an answer

After the run a good request of each protocol must still be answered. The counts per class are
printed; each finding is saved under DIR/findings/ (replay them with --replay); exit 1 on any finding.
"""

import argparse
import asyncio
import itertools
import json
import logging
import pathlib
import pickle
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "fuzz" / "serving"))

import aiohttp  # noqa: E402
import grpc  # noqa: E402

import mutations  # noqa: E402
from graphdef.serving import runtime as runtimes  # noqa: E402
from graphdef.serving.server import Options, Server  # noqa: E402

MODEL = ROOT / "tests" / "models" / "mlp.pb"
CLIENTS = 8
FINDINGS = ("5xx", "dirty-4xx", "traceback", "hang", "lost")
CLEAN_GRPC = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND, grpc.StatusCode.RESOURCE_EXHAUSTED,
              grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.OUT_OF_RANGE}
SERVICES = {"ModelInfer": "inference.GRPCInferenceService", "ModelMetadata": "inference.GRPCInferenceService",
            "ModelReady": "inference.GRPCInferenceService", "Predict": "tensorflow.serving.PredictionService",
            "GetModelMetadata": "tensorflow.serving.PredictionService"}


class LogWatch(logging.Handler):
    """Log records carrying an exception or at ERROR, from every logger."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        if record.exc_info or record.levelno >= logging.ERROR:
            self.records.append(self.format(record))


def one_json_line(body):
    try:
        error = json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        return False
    return isinstance(error, str) and "\n" not in error and "Traceback" not in error


async def send_http(session, base, case):
    _, method, path, headers, data = case
    try:
        async with session.request(method, base + path, data=data, headers=headers,
                                   skip_auto_headers=["Content-Type"]) as response:
            body = await response.read()
            status = response.status
    except aiohttp.InvalidURL:
        return "ok", "the client refused the URL"  # never sent: nothing the server did
    except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError, aiohttp.ClientPayloadError) as e:
        return "lost", f"{type(e).__name__}: {e}"
    if status < 400:
        return "ok", ""
    if status >= 500:
        return "5xx", f"{status} {body[:300]!r}"
    return ("clean-4xx", "") if one_json_line(body) else ("dirty-4xx", f"{status} {body[:300]!r}")


async def send_grpc(channel, case):
    _, rpc, data = case
    call = channel.unary_unary(f"/{SERVICES[rpc]}/{rpc}", request_serializer=None, response_deserializer=None)
    try:
        await call(data)
    except grpc.aio.AioRpcError as e:
        details = e.details() or ""
        if e.code() in CLEAN_GRPC:
            return ("clean-4xx", "") if "\n" not in details else ("dirty-4xx", f"{e.code().name}: {details[:300]}")
        if e.code() == grpc.StatusCode.UNAVAILABLE:
            return "lost", details[:300]
        return "5xx", f"{e.code().name}: {details[:300]}"
    return "ok", ""


async def run_case(session, base, channel, case, timeout):
    send = send_http(session, base, case) if case[0] == "http" else send_grpc(channel, case)
    try:
        return await asyncio.wait_for(send, timeout)
    except asyncio.TimeoutError:
        return "hang", f"no answer within {timeout} s"


def describe(case):
    if case[0] == "http":
        return f"HTTP {case[1]} {case[2][:200]} headers={case[3]} body={case[4][:300]!r} ({len(case[4])} bytes)"
    return f"gRPC {case[1]} message={case[2][:300]!r} ({len(case[2])} bytes)"


async def campaign(args, cases):
    watch = LogWatch()
    logging.getLogger().addHandler(watch)
    for name in ("graphdef.serving", "aiohttp", "asyncio", "grpc"):
        logging.getLogger(name).addHandler(watch)
    logging.getLogger("graphdef.serving.access").setLevel(logging.WARNING)
    logging.getLogger("graphdef.serving").setLevel(logging.WARNING)
    choice = args.runtime or runtimes.default_choice()[0]
    options = Options(port_http=0, port_grpc=0, max_batch_size=4, max_queue_delay_ms=1, workers=1,
                      max_body_mb=1, poll_interval=0, runtime=choice, client_timeout=args.timeout)
    server = Server(MODEL, options)
    await server.start()
    base = f"http://127.0.0.1:{server.port_http}"
    counts = {}
    findings = []
    case_iter = iter(cases)
    started = time.monotonic()
    connector = aiohttp.TCPConnector(limit=CLIENTS)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=None)) as session, \
            grpc.aio.insecure_channel(f"127.0.0.1:{server.port_grpc}",
                                      options=[("grpc.max_send_message_length", -1)]) as channel:

        async def client():
            for case in case_iter:
                before = len(watch.records)
                kind, detail = await run_case(session, base, channel, case, args.timeout)
                if len(watch.records) > before and kind not in FINDINGS:
                    kind, detail = "traceback", watch.records[before][:2000]
                counts[kind] = counts.get(kind, 0) + 1
                if kind in FINDINGS:
                    findings.append((kind, detail, case))

        await asyncio.gather(*(client() for _ in range(CLIENTS)))
        # the server still serves both protocols right
        for seed in (mutations.http_seeds()[0], mutations.grpc_seeds()[0]):
            case = ("http", seed[0], seed[1], {}, mutations.dumps(seed[3])) if len(seed) == 4 else \
                ("grpc", seed[0], seed[1].SerializeToString())
            kind, detail = await run_case(session, base, channel, case, args.timeout)
            if kind != "ok":
                findings.append(("lost", f"a good request after the run: {kind} {detail}", case))
    await server.drain()
    for name in ("", "graphdef.serving", "aiohttp", "asyncio", "grpc"):
        logging.getLogger(name).removeHandler(watch)
    return counts, findings, time.monotonic() - started, choice


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "build" / "fuzz-serve")
    parser.add_argument("--runtime", choices=sorted(runtimes.RUNTIMES))
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds before a case is a hang (default 10)")
    parser.add_argument("--replay", nargs="*", type=pathlib.Path, help="saved findings to run again")
    args = parser.parse_args()
    if args.replay is not None:
        cases = [pickle.loads(path.read_bytes()) for path in args.replay]
    else:
        cases = itertools.islice(mutations.cases(args.seed), args.runs)
    counts, findings, seconds, choice = asyncio.run(campaign(args, cases))
    total = sum(counts.values())
    print(f"fuzz-serve: {total} cases (seed {args.seed}, runtime {choice}) in {seconds:.0f} s, "
          f"{total / max(seconds, 1e-9):.0f}/s: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if not findings:
        print("fuzz-serve: no findings")
        return 0
    folder = args.out / "findings"
    folder.mkdir(parents=True, exist_ok=True)
    seen = set()
    for i, (kind, detail, case) in enumerate(findings):
        (folder / f"{kind}-{i:05d}.case").write_bytes(pickle.dumps(case))
        key = (kind, detail[:80])
        if key not in seen:
            seen.add(key)
            print(f"FINDING {kind}: {detail}\n    {describe(case)}")
    print(f"fuzz-serve: {len(findings)} findings, saved in {folder}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
