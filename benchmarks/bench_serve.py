"""graphrun serve under load: N concurrent gRPC clients against a real model (Keras MobileNetV2), on loopback.

    .venv/bin/python benchmarks/bench_serve.py [--seconds S] [--clients 1,8,64] [--max-batch-size B]
                                               [--workers N] [--runtime cc|python] [--model PATH]

The model is Keras' MobileNetV2 (224x224x3 image -> 1000 class probabilities) frozen by
benchmarks/bench_real_models.py into build/bench_models/mobilenet_v2.pb (--model picks another
frozen graph with one batchable image input), served from a repository folder (model/1/model.pb)
with dynamic batching by the --runtime asked for (default cc: graphrun-cc's kernels in process).
Each client is a coroutine on one asyncio loop sending one-image ModelInfer requests back to back,
the image as raw tensor bytes in a request encoded once (only the id changes), so the clients' own
CPU stays small; for every client count the run lasts --seconds and reports throughput, latency
percentiles (nearest rank) and errors.

Exactly once: every request gets one outcome, and the ids the clients got answers for are the ids
in the server's access log with status OK, compared as sets and counts. Before the rows comes an
untimed warm-up run (its answers count too); after the rows, a run with the last client count
has version 2 of the model copied into the repository half-way through
(answers from both versions must come back, none lost; a run of its own, as loading a model takes
CPU that a row's ratio must not pay); a final run sends SIGTERM half-way: each request then either
was answered OK (and is in the access log) or was refused with UNAVAILABLE before the server
received it (and is not), never lost or answered twice.

The server runs graphrun serve's default workers (for cc one load of the model per core, each on
one OpenMP thread, on a machine of up to 4 cores) unless --workers says otherwise. The ratio
compares served images/s with the same runtime called in process on batches of the mean size the
server formed, measured in the middle of each row (the server idle: each row is served for half its
time before the reference and half after) so both see the same machine. The reference is the best
the runtime does in process with the choices the server has: it runs in processes of its own, for
each way of sharing the cores out (the server's workers and threads; one load on every core; for cc
one load per core on one thread each; never more workers than clients), with OpenMP's short spin
(the Python binding's default) and with passive waits (graphrun serve's), and the fastest counts;
the rows say which it was. The server's CPU per image is also given per kind of thread (its event
loop, gRPC's own threads, the threads running the model). Figures are printed, and the run exits 1
only when the exactly-once proof fails.
The clients share the machine's cores with the server, so on a small machine the served figures are
a lower bound.
"""

import argparse
import asyncio
import json
import math
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import grpc
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphdef._proto import oip_pb2  # noqa: E402
from graphdef.serving.runtime import cores, default_threads, default_workers, load_runtime  # noqa: E402

MODEL = ROOT / "build" / "bench_models" / "mobilenet_v2.pb"
# The server's environment: this process's as it started. Loading the library for the in-process
# reference sets GOMP_SPINCOUNT here (the binding's default), and a server inheriting it would not
# take graphrun serve's own default (passive OpenMP waits).
SERVER_ENV = dict(os.environ)
INFER = "/inference.GRPCInferenceService/ModelInfer"
# what a request sent after SIGTERM gets: refused by the draining server, never handled
REFUSED = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)


def percentile(sorted_values, p):
    if not sorted_values:
        return float("nan")
    return sorted_values[max(0, math.ceil(p / 100 * len(sorted_values)) - 1)]


def start_server(repository, log_path, args):
    command = [sys.executable, "-c", "import sys; from graphdef.graphrun.cli import main; sys.exit(main())",
               "serve", str(repository), "--port-http", "0", "--port-grpc", "0",
               "--max-batch-size", str(args.max_batch_size), "--max-queue-delay-ms", str(args.delay_ms),
               "--workers", str(args.workers), "--max-queue", "1024", "--poll-interval", "0.5",
               "--runtime", args.runtime, "--access-log", str(log_path)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env={**SERVER_ENV, "PYTHONPATH": str(ROOT)})
    line = process.stdout.readline()
    if not line.startswith("graphrun serve: ready"):
        process.kill()
        sys.exit(f"bench_serve: the server did not start ({line.strip()!r})")
    fields = dict(part.split("=") for part in line.split()[3:])
    return process, int(fields["grpc"]), int(fields["http"])


class Run:
    def __init__(self):
        self.latencies, self.ok, self.errors, self.versions = [], [], {}, set()
        self.sent = 0
        self.elapsed = 0.0

    def add(self, other):
        self.latencies += other.latencies
        self.ok += other.ok
        for code, ids in other.errors.items():
            self.errors.setdefault(code, []).extend(ids)
        self.versions |= other.versions
        self.sent += other.sent
        self.elapsed += other.elapsed


def encoded_request(input_name, image):
    """A ModelInferRequest for one image as bytes, with a fixed-width id (encoded before the image), so each
    request is these bytes with its id patched in: no protobuf encoding of 600 kB per request."""
    request = oip_pb2.ModelInferRequest(model_name=MODEL_NAME)
    request.inputs.add(name=input_name, datatype="FP32", shape=list(image.shape))
    request.raw_input_contents.append(image.tobytes())
    request.id = "#" * ID_WIDTH
    data = request.SerializeToString()
    at = data.index(b"#" * ID_WIDTH)
    return data[:at], data[at + ID_WIDTH:]


ID_WIDTH = 24
MODEL_NAME = "model"


async def client_loop(channel, encoded, run, stop, client):
    call = channel.unary_unary(INFER, request_serializer=None,
                               response_deserializer=oip_pb2.ModelInferResponse.FromString)
    head, tail = encoded
    seq = 0
    while not stop.is_set():
        request_id = f"{client}-{seq}".rjust(ID_WIDTH, "0")
        seq += 1
        run.sent += 1
        start = time.perf_counter()
        try:
            response = await call(head + request_id.encode() + tail, timeout=60)
        except grpc.aio.AioRpcError as e:
            run.errors.setdefault(e.code().name, []).append(request_id)
            if e.code() in REFUSED:
                return  # the server is shutting down (SIGTERM): this client stops
            continue
        run.latencies.append(time.perf_counter() - start)
        if response.id != request_id:
            run.errors.setdefault("WRONG_ID", []).append(request_id)
            continue
        run.ok.append(response.id)
        run.versions.add(response.model_version)


async def load(port, clients, seconds, encoded, tag, during=None):
    run = Run()
    stop = asyncio.Event()
    options = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=options) as channel:
        tasks = [asyncio.create_task(client_loop(channel, encoded, run, stop, f"{tag}.{i}"))
                 for i in range(clients)]
        started = time.perf_counter()
        if during is not None:
            await asyncio.sleep(seconds / 2)
            during()
            await asyncio.sleep(seconds / 2)
        else:
            await asyncio.sleep(seconds)
        stop.set()
        await asyncio.gather(*tasks)
        run.elapsed = time.perf_counter() - started
    return run


def logged_ok_ids(log_path):
    ids = []
    for line in pathlib.Path(log_path).read_text().splitlines():
        entry = json.loads(line)
        if entry.get("method") == "ModelInfer" and entry["status"] == "OK":
            ids.append(entry["id"])
    return ids


def in_process(runtime, image, batch, workers, seconds):
    """Images/s of the runtime called directly by `workers` threads on batches of `batch` images."""
    name, fetch = runtime.inputs[0].name, runtime.outputs[0].name
    feeds = {name: np.repeat(image, batch, axis=0)}
    for model in getattr(runtime, "models", [runtime]):  # each cc load plans and makes its kernels, untimed
        model.run(feeds, [fetch])
    counts = [0] * workers
    deadline = time.perf_counter() + seconds

    def work(i):
        runtime.run(feeds, [fetch])  # each thread's Session plans once, untimed
        while time.perf_counter() < deadline:
            runtime.run(feeds, [fetch])
            counts[i] += batch

    started, cpu = time.perf_counter(), time.process_time()
    threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    images = max(1, sum(counts))
    return images / (time.perf_counter() - started), (time.process_time() - cpu) / images


# OpenMP's waits for the in-process reference: the binding's default (a short spin), and the passive
# waits graphrun serve takes; on a loaded machine either can be the faster, and the reference is
# the better of the two (it must be the best the runtime does in process).
REFERENCE_WAITS = {"spin": {"GOMP_SPINCOUNT": "1000"}, "passive": {"OMP_WAIT_POLICY": "PASSIVE"}}


def reference_shapes(args, clients):
    """The (workers, OpenMP threads per worker) the reference tries: the server's own, one worker on every
    core, and for cc one worker per core on one thread each; never more workers than clients, as the server
    has no more batches to run at once. Python's Session has no thread count (None)."""
    if args.runtime != "cc":
        shapes = [(args.workers, None), (1, None)]
    else:
        shapes = [(args.workers, args.threads), (1, cores()), (cores(), 1)]
    return list(dict.fromkeys((min(workers, clients), threads) for workers, threads in shapes))


def reference(args, batch, seconds, clients):
    """(images/s, CPU s/image, what ran) of the best in-process run among reference_shapes x REFERENCE_WAITS,
    each in a process of its own (libgomp reads its policy once, at start), `seconds` each."""
    best = None
    for workers, threads in reference_shapes(args, clients):
        for name, variables in REFERENCE_WAITS.items():
            env = {key: value for key, value in SERVER_ENV.items()
                   if key not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
            command = [sys.executable, str(pathlib.Path(__file__).resolve()), "--model", str(args.model),
                       "--runtime", args.runtime, "--workers", str(workers), "--reference-batch", str(batch),
                       "--seconds", str(seconds)] + (["--threads", str(threads)] if threads else [])
            done = subprocess.run(command, env={**env, **variables, "PYTHONPATH": str(ROOT)}, capture_output=True,
                                  text=True, check=False)
            if done.returncode != 0:
                sys.exit(f"bench_serve: the in-process reference failed: {done.stderr.strip()[-500:]}")
            result = json.loads(done.stdout.strip().splitlines()[-1])
            if best is None or result["rate"] > best[0]:
                shape = f"{workers}x{threads or 'default'} threads" if args.runtime == "cc" else f"{workers} threads"
                best = (result["rate"], result["cpu"], f"{shape}, {name}")
    return best


def cpu_seconds(pid):
    """User + system CPU seconds of a process, all its threads (Linux's /proc); nan elsewhere."""
    try:
        fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


THREAD_KINDS = ("event loop", "gRPC threads", "inference")


def cpu_by_thread(pid):
    """{thread id: (kind, CPU seconds)} of the server's threads (Linux's /proc; empty elsewhere). The event
    loop is the main thread; gRPC's core names its threads; the rest are Python's and OpenMP's threads,
    which run the model (a worker thread and its OpenMP team) or idle."""
    found = {}
    try:
        own = pathlib.Path(f"/proc/{pid}/comm").read_text().strip()
        tasks = list(pathlib.Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue  # the thread ended meanwhile
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        tid = int(task.name)
        kind = THREAD_KINDS[0] if tid == pid else THREAD_KINDS[2] if name == own else THREAD_KINDS[1]
        found[tid] = (kind, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"))
    return found


def cpu_by_kind(before, after):
    """CPU seconds per thread kind between two cpu_by_thread() samples (threads that ended are lost)."""
    spent = dict.fromkeys(THREAD_KINDS, 0.0)
    for tid, (kind, seconds) in after.items():
        spent[kind] += seconds - before.get(tid, (kind, 0.0))[1]
    return spent


def batch_rows(http_port):
    """(sum, count) of graphdef_serve_batch_rows from the server's /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=30) as response:
        text = response.read().decode()
    values = {}
    for line in text.splitlines():
        for key in ("graphdef_serve_batch_rows_sum", "graphdef_serve_batch_rows_count"):
            if line.startswith(key + "{"):
                values[key] = values.get(key, 0.0) + float(line.split()[-1])
    return values.get("graphdef_serve_batch_rows_sum", 0.0), values.get("graphdef_serve_batch_rows_count", 0.0)


def served_row(process, port, http_port, clients, args, encoded):
    """One row: served for half the time, the in-process reference, served for the other half. The
    reference sits between the two halves so that a change in the machine's load during the row (other
    work on a shared machine) weighs on both sides alike."""
    run, spent = Run(), {"server": 0.0, "client": 0.0, "threads": dict.fromkeys(THREAD_KINDS, 0.0)}
    for half in ("a", "b"):
        before = batch_rows(http_port)
        server_cpu, client_cpu, threads = cpu_seconds(process.pid), time.process_time(), cpu_by_thread(process.pid)
        run.add(asyncio.run(load(port, clients, args.seconds / 2, encoded, f"c{clients}{half}")))
        spent["server"] += cpu_seconds(process.pid) - server_cpu
        spent["client"] += time.process_time() - client_cpu
        for kind, seconds in cpu_by_kind(threads, cpu_by_thread(process.pid)).items():
            spent["threads"][kind] += seconds
        if half == "a":
            after = batch_rows(http_port)
            run.mean_batch = (after[0] - before[0]) / max(1.0, after[1] - before[1])
            # the reference on the same machine load, while the server idles
            run.load = os.getloadavg()[0]
            run.reference, run.reference_cpu, run.reference_wait = reference(
                args, max(1, round(run.mean_batch)), min(args.seconds, 10.0) / 2, clients)
    answered = max(1, len(run.ok))
    run.server_cpu = spent["server"] / answered
    run.client_cpu = spent["client"] / answered
    run.by_kind = {kind: seconds / answered for kind, seconds in spent["threads"].items()}
    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="per client count (default 10)")
    parser.add_argument("--clients", default="1,8,64", help="client counts (default 1,8,64)")
    # Under the client count: while one batch runs, the next one's requests arrive and are parsed,
    # so the cores never wait for the network; a batch of everyone would.
    # graphrun-cc's MobileNetV2 gives the most images/s at small batches today (per image, a large
    # batch costs more: its large activations are fresh memory each run).
    parser.add_argument("--max-batch-size", type=int, default=8)
    # graphrun serve's default. With several workers a free one waits this long for its batch to fill
    # while another runs (a lone worker never did: its slot is free only when nothing runs), leaving a
    # core idle, and graphrun-cc's cost per image hardly depends on the batch size.
    parser.add_argument("--delay-ms", type=float, default=2.0)
    parser.add_argument("--workers", type=int,
                        help="the server's inference workers (default graphrun serve's: for cc one per core, up "
                             "to 4, each its own load of the model; for python 1, as its Session would take the "
                             "GIL from the event loop)")
    parser.add_argument("--threads", type=int, help=argparse.SUPPRESS)  # a reference's OpenMP threads per load
    parser.add_argument("--runtime", choices=["cc", "python"], default="cc")
    parser.add_argument("--model", type=pathlib.Path, default=MODEL,
                        help="a frozen graph with one image input [?, H, W, C] (default: Keras MobileNetV2)")
    parser.add_argument("--reference-batch", type=int, help=argparse.SUPPRESS)  # one reference, in its own process
    args = parser.parse_args()
    if not args.model.is_file():
        sys.exit(f"bench_serve: {args.model} not found; make it with .venv/bin/python benchmarks/bench_real_models.py")
    counts = [int(c) for c in args.clients.split(",")]
    if args.reference_batch:
        runtime = load_runtime(args.model, args.runtime, instances=args.workers, threads=args.threads)
        spec = runtime.inputs[0]
        image = np.random.default_rng(0).random([1] + spec.shape[1:], dtype=np.float32)
        rate, cpu = in_process(runtime, image, args.reference_batch, args.workers, args.seconds)
        print(json.dumps({"rate": rate, "cpu": cpu}))
        return 0
    args.workers = args.workers or (default_workers("cc") if args.runtime == "cc" else 1)
    # graphrun serve's own share of the cores among its workers (server.Options)
    args.threads = default_threads(args.workers) if args.runtime == "cc" else None
    runtime = load_runtime(args.model, args.runtime)  # the model's input
    spec = runtime.inputs[0]
    image = np.random.default_rng(0).random([1] + spec.shape[1:], dtype=np.float32)
    encoded = encoded_request(spec.name, image)

    failures = []
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        repository = pathlib.Path(tmp) / "models"
        folder = repository / MODEL_NAME
        (folder / "1").mkdir(parents=True)
        shutil.copy(args.model, folder / "1" / "model.pb")
        log_path = pathlib.Path(tmp) / "access.log"
        process, port, http_port = start_server(repository, log_path, args)
        rows = []
        all_ok = []
        try:
            # untimed: each batch size's first run plans it and makes its oneDNN primitives, as the
            # in-process reference's untimed first run does
            warm = asyncio.run(load(port, max(counts), min(args.seconds, 3.0), encoded, "warm-up"))
            all_ok += warm.ok
            for n in counts:
                run = served_row(process, port, http_port, n, args, encoded)
                rows.append((n, run))
                all_ok += run.ok

            # a new version half-way through a run of its own (loading it takes CPU a ratio row must not pay)
            def switch():
                (folder / "2").mkdir()
                shutil.copy(args.model, folder / "2" / "model.pb.tmp")
                os.replace(folder / "2" / "model.pb.tmp", folder / "2" / "model.pb")
            switch_run = asyncio.run(load(port, counts[-1], args.seconds, encoded, "switch", during=switch))
            all_ok += switch_run.ok
            if switch_run.errors:
                failures.append(f"the version switch: errors {({k: len(v) for k, v in switch_run.errors.items()})}")
            if switch_run.versions != {"1", "2"}:
                failures.append(f"the version switch: answers came from versions {sorted(switch_run.versions)}")
            # the SIGTERM run: the server is told to stop half-way through
            run = asyncio.run(load(port, counts[-1], args.seconds, encoded, "sigterm",
                                   during=lambda: process.send_signal(signal.SIGTERM)))
            all_ok += run.ok
            code = process.wait(60)
        finally:
            if process.poll() is None:
                process.kill()
        logged = logged_ok_ids(log_path)
        sigterm_run = run

    # -- exactly once --------------------------------------------------------------------
    if len(set(all_ok)) != len(all_ok):
        failures.append(f"{len(all_ok) - len(set(all_ok))} answers were received twice")
    if sorted(logged) != sorted(all_ok):
        failures.append(f"answered OK by the server {len(logged)}, received OK by clients {len(all_ok)}: "
                        f"{len(set(logged) ^ set(all_ok))} ids differ")
    for n, r in rows:
        if r.errors:
            failures.append(f"{n} clients: errors {({k: len(v) for k, v in r.errors.items()})}")
    refused_names = {c.name for c in REFUSED}
    unexpected = {k: len(v) for k, v in sigterm_run.errors.items() if k not in refused_names}
    if unexpected:
        failures.append(f"SIGTERM run: errors other than a refusal: {unexpected}")
    refused_ids = [i for k in refused_names for i in sigterm_run.errors.get(k, [])]
    if set(refused_ids) & set(logged):
        failures.append(f"{len(set(refused_ids) & set(logged))} requests refused to the client were handled")
    if code != 0:
        failures.append(f"the server exited with {code} after SIGTERM")

    # -- figures -------------------------------------------------------------------------
    workers = f"{args.workers} workers" + (f" of {args.threads} OpenMP thread(s), each its own load of the model"
                                           if args.runtime == "cc" else " (threads)")
    print(f"model {args.model}, runtime {args.runtime} ({runtime.kind}), {workers}, {cores()} cores, "
          f"--max-batch-size "
          f"{args.max_batch_size}, --max-queue-delay-ms {args.delay_ms:g}, {args.seconds:g} s per client count, "
          f"one image per request; in process = the runtime called directly on batches of the mean size the "
          f"server formed, the best of the ways of sharing out the cores and OpenMP's spinning and passive waits")
    print(f"{'clients':>7} {'requests':>9} {'req/s':>9} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'errors':>7} "
          f"{'mean batch':>10} {'in-process/s':>12} {'served/in-process':>18} {'load avg':>8} "
          f"{'CPU ms/image: server':>20} {'clients':>7} {'in process':>10}")
    for n, r in rows:
        lat = sorted(r.latencies)
        rate = len(r.ok) / r.elapsed
        errors = sum(len(v) for v in r.errors.values())
        reference = r.reference
        print(f"{n:>7} {len(r.ok):>9} {rate:>9,.0f} {percentile(lat, 50) * 1e3:>8.2f} "
              f"{percentile(lat, 90) * 1e3:>8.2f} {percentile(lat, 99) * 1e3:>8.2f} {errors:>7} {r.mean_batch:>10.1f} "
              f"{reference:>12,.0f} {rate / reference:>17.0%} {r.load:>8.1f} {r.server_cpu * 1e3:>20.1f} "
              f"{r.client_cpu * 1e3:>7.1f} {r.reference_cpu * 1e3:>10.1f}")
    print("server CPU ms/image by thread: " + "; ".join(
        f"{n} clients: " + ", ".join(f"{k} {v * 1e3:.2f}" for k, v in r.by_kind.items()) for n, r in rows))
    print("in-process reference (workers x OpenMP threads, waits): " +
          "; ".join(f"{n} clients: {r.reference_wait}" for n, r in rows))
    refused = len(refused_ids)
    print(f"version switch half-way through a {counts[-1]}-client run of its own: {len(switch_run.ok)} answered, "
          f"from versions {sorted(switch_run.versions)}")
    print(f"SIGTERM half-way through a {counts[-1]}-client run: {len(sigterm_run.ok)} answered OK, {refused} refused "
          f"(UNAVAILABLE/CANCELLED) and absent from the server's log, server exit code {code}")
    print(f"exactly once: {len(all_ok)} answers received, {len(set(all_ok))} distinct ids, {len(logged)} OK in the "
          f"server's access log, sets {'equal' if sorted(logged) == sorted(all_ok) else 'DIFFERENT'}")
    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
