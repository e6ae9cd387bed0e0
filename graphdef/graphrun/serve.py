"""graphrun serve: the model over the Open Inference Protocol and TensorFlow Serving's API."""

import asyncio
import logging
import os
import sys

from graphdef.graphrun import cli
from graphdef.serving import runtime as runtimes
from graphdef.serving.server import Options, Server

DESCRIPTION = ("Serve a GraphDef (or a repository of them) over the Open Inference Protocol (REST /v2 and gRPC "
               "inference.GRPCInferenceService) and TensorFlow Serving's API (REST /v1 and gRPC "
               "tensorflow.serving.PredictionService).")

EPILOG = """\
model:
  MODEL is a .pb/.pbtxt file, served as its file name without the extension (or --model-name),
  or a repository folder NAME/VERSION/model.pb: every model in it, each at its highest version;
  a higher version that appears is loaded and served without dropping requests (--poll-interval).

endpoints (HTTP on --port-http, gRPC on --port-grpc):
  GET  /v2/health/live, /v2/health/ready, /v2, /v2/models/NAME[/versions/V][/ready]
  POST /v2/models/NAME[/versions/V]/infer          JSON data or the binary tensor extension
  GET  /v1/models/NAME[/versions/V][/metadata]
  POST /v1/models/NAME[/versions/V]:predict        {"instances": [...]} or {"inputs": ...}
  GET  /metrics                                    Prometheus metrics
  gRPC inference.GRPCInferenceService: ServerLive, ServerReady, ModelReady, ServerMetadata,
       ModelMetadata, ModelInfer;  tensorflow.serving.PredictionService: Predict, GetModelMetadata

runtime:
  --runtime cc runs the model with graphrun-cc's C++ kernels in process (the package's libgraphrun.so, or
  $GRAPHDEF_LIBGRAPHRUN), the fastest; --runtime python with graphdef's Session. By default: cc when the
  library is built, falling back to python for a model needing an op only Python runs; one line at
  start says which runtime serves.

batching:
  with --max-batch-size B > 1, requests to a model whose inputs and outputs all have a first
  dimension of any size are stacked, up to B rows: the requests queued while the workers were
  busy, and while another batch runs, those arriving within --max-queue-delay-ms. More than
  --max-queue waiting requests are answered 429 / RESOURCE_EXHAUSTED.

limits:
  a body over --max-body-mb is 413 (gRPC: RESOURCE_EXHAUSTED), refused on its Content-Length before
  it is read; a client has --client-timeout seconds for its headers (or the connection is closed) and
  as long again for its body (408); gRPC peers that stop answering keepalive pings are dropped.

SIGTERM or Ctrl-C stops listening, answers every request already received, and exits 0.
One JSON line per request goes to stderr (--access-log FILE to write it elsewhere, - to drop it)."""


def _positive_int(text):
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def _port(text):
    value = int(text)
    if not 0 <= value <= 65535:
        raise ValueError(text)
    return value


def _non_negative(text):
    value = float(text)
    if not value >= 0:
        raise ValueError(text)
    return value


def _positive_float(text):
    value = float(text)
    if not 0 < value < float("inf"):
        raise ValueError(text)
    return value


def build_parser():
    parser = cli.verb_parser("serve", DESCRIPTION, EPILOG)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port-http", type=_port, default=8000, metavar="N",
                        help="HTTP port (default 8000; 0: any free)")
    parser.add_argument("--port-grpc", type=_port, default=8001, metavar="N",
                        help="gRPC port (default 8001; 0: any free)")
    parser.add_argument("--model-name", metavar="NAME", help="the name a single model file is served as")
    parser.add_argument("--max-batch-size", type=_positive_int, default=1, metavar="B",
                        help="rows per stacked batch (default 1: no batching)")
    parser.add_argument("--max-queue-delay-ms", type=_non_negative, default=2.0, metavar="D",
                        help="longest wait for a batch to fill, in ms (default 2)")
    parser.add_argument("--max-queue", type=_positive_int, default=256, metavar="Q",
                        help="waiting requests per model before 429 / RESOURCE_EXHAUSTED (default 256)")
    parser.add_argument("--runtime", choices=sorted(runtimes.RUNTIMES),
                        help="what runs the model (default cc when libgraphrun.so loads, else python)")
    parser.add_argument("--workers", type=_positive_int, metavar="N",
                        help="batches run at once per model (default: with the cc runtime one per core, up to 4, "
                             "each worker its own load of the model; 2 with python)")
    parser.add_argument("--threads", type=_positive_int, metavar="T",
                        help="OpenMP threads each cc worker runs its batches on (default: the cores shared out "
                             "among the workers, at least 1)")
    parser.add_argument("--max-body-mb", type=_non_negative, default=64, metavar="MB",
                        help="largest request body or gRPC message (default 64)")
    parser.add_argument("--client-timeout", type=_positive_float, default=30.0, metavar="S",
                        help="seconds a client gets for a request's headers, then as long for its body; it must "
                             "also take some of its answer every S seconds, a gRPC call's message must arrive "
                             "within S, and an idle connection is closed after as long (default 30)")
    parser.add_argument("--max-connections", type=_positive_int, default=None, metavar="N",
                        help="HTTP connections open at once, and gRPC connections likewise; past it a new HTTP "
                             "connection is answered 503 and closed (default 1000, or half the open-file limit)")
    parser.add_argument("--poll-interval", type=_non_negative, default=2.0, metavar="S",
                        help="seconds between looks for new versions in a repository (default 2; 0: never)")
    parser.add_argument("--access-log", metavar="FILE",
                        help="where the JSON access log goes (default stderr; - for none)")
    return parser


def _logging(args):
    log = logging.getLogger("graphdef.serving")
    log.setLevel(logging.INFO)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("graphrun serve: %(message)s"))
    log.addHandler(handler)
    log.propagate = False
    access = logging.getLogger("graphdef.serving.access")
    access.propagate = False
    if args.access_log == "-":
        access.setLevel(logging.WARNING)
        return
    access.setLevel(logging.INFO)
    access.addHandler(logging.FileHandler(args.access_log) if args.access_log else logging.StreamHandler(sys.stderr))


# How long a thread may hold the GIL while another waits for it (Python's default is 5 ms). The
# event loop needs the GIL for a moment at each step of every request; with inference threads
# running Python code, 5 ms per handoff would be added to each step.
SWITCH_INTERVAL = 0.0005


def _choose_runtime(args):
    """(runtime, fallback): the --runtime asked for, else the best available; says which in one line."""
    log = logging.getLogger("graphdef.serving")
    if args.runtime == "python":
        log.info("%s, as asked (--runtime python)", runtimes.DESCRIPTIONS["python"])
        return "python", False
    choice, why_not = runtimes.default_choice()
    if args.runtime == "cc" and choice != "cc":
        raise cli.Failure(cli.EXIT_USAGE, f"--runtime cc: {why_not}; or serve with --runtime python")
    if args.runtime == "cc":
        log.info("%s, as asked (--runtime cc)", runtimes.DESCRIPTIONS["cc"])
    elif choice == "cc":
        log.info("%s; a model it cannot run is served by Python's", runtimes.DESCRIPTIONS["cc"])
    else:
        log.info("%s: %s", runtimes.DESCRIPTIONS["python"], why_not)
    return choice, args.runtime is None


def main(args):
    _logging(args)
    # Before the library loads (graphrun_c.h, "OpenMP"): a server's network loop and interpreter need
    # the cores between runs, and each worker thread's OpenMP team would otherwise spin after its run.
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    sys.setswitchinterval(SWITCH_INTERVAL)
    runtime, fallback = _choose_runtime(args)
    options = Options(host=args.host, port_http=args.port_http, port_grpc=args.port_grpc,
                      max_batch_size=args.max_batch_size, max_queue_delay_ms=args.max_queue_delay_ms,
                      max_queue=args.max_queue, workers=args.workers, threads=args.threads,
                      max_body_mb=args.max_body_mb, client_timeout=args.client_timeout,
                      max_connections=args.max_connections,
                      poll_interval=args.poll_interval, model_name=args.model_name, runtime=runtime,
                      fallback=fallback)
    server = Server(args.model, options)

    def announce(s):
        # one line a script can wait for and read the bound ports from
        print(f"graphrun serve: ready http={s.port_http} grpc={s.port_grpc}", flush=True)

    try:
        asyncio.run(server.serve_until_signal(announce))
    except OSError as e:
        raise cli.Failure(cli.EXIT_USAGE, f"cannot listen: {e.strerror or e}") from None
    except ValueError as e:
        raise cli.Failure(cli.EXIT_MODEL, " ".join(str(e).split())) from None
    return cli.EXIT_OK
