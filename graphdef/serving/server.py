"""Both servers on one asyncio event loop, inference on worker threads, a graceful drain on SIGTERM.

One loop runs aiohttp (REST) and grpc.aio (gRPC); neither blocks on inference, which runs on a
small pool of worker threads: with the cc runtime each worker runs its own load of the model on its
own OpenMP threads (runtime.py), with python numpy releases the GIL inside its kernels. On
SIGTERM or SIGINT the server stops accepting connections, answers every request already
received (queued or running), then exits.
"""

import asyncio
import logging
import signal
import socket
from concurrent.futures import ThreadPoolExecutor

import grpc
from aiohttp import web

from graphdef.serving import grpc_server, http_protocol, rest
from graphdef.serving.metrics import Metrics
from graphdef.serving.repository import Repository
from graphdef.serving.runtime import default_threads, default_workers

log = logging.getLogger("graphdef.serving")


# After an answer sent before a body was read whole (413, 408), aiohttp reads on for this long, so that a
# client still sending gets to read its answer, then closes (its default, 10 s, keeps a stalled peer's
# connection open that much longer).
LINGER_SECONDS = 1.0


class Options:
    """The server's settings (graphrun serve's flags)."""

    def __init__(self, host="127.0.0.1", port_http=8000, port_grpc=8001, max_batch_size=1,
                 max_queue_delay_ms=0.0, max_queue=256, workers=None, max_body_mb=64, poll_interval=2.0,
                 model_name=None, drain_seconds=30.0, runtime="python", fallback=False, client_timeout=30.0,
                 threads=None, max_connections=None):
        self.host = host
        self.port_http = port_http
        self.port_grpc = port_grpc
        self.max_batch_size = max_batch_size
        self.max_queue_delay_ms = max_queue_delay_ms
        self.max_queue = max_queue
        # batches under way at once per model (None: runtime.default_workers), and for cc the OpenMP
        # threads each runs on (None: the cores shared out among the workers)
        self.workers = workers or default_workers(runtime)
        self.threads = threads or (default_threads(self.workers) if runtime == "cc" else None)
        self.max_body = int(max_body_mb * 1024 * 1024)
        self.poll_interval = poll_interval
        self.model_name = model_name
        self.drain_seconds = drain_seconds
        self.runtime = runtime      # "cc" or "python" (graphdef/serving/runtime.py)
        self.fallback = fallback    # a model the C++ runtime cannot run goes to Python's
        # seconds a client gets to send a request's headers (from connecting or its previous answer)
        # and then its body; an idle keep-alive connection is closed after as long
        self.client_timeout = client_timeout
        # HTTP connections open at once, and gRPC connections likewise (None:
        # http_protocol.default_max_connections(): 1000, or half the open-file limit if lower)
        self.max_connections = max_connections


class _State:
    ready = False


class Server:
    def __init__(self, model_path, options):
        self.options = options
        self.metrics = Metrics()
        self.state = _State()
        self.executor = ThreadPoolExecutor(max_workers=options.workers, thread_name_prefix="graphdef-serve")
        self.repository = Repository(model_path, options, self.executor, self.metrics, name=options.model_name)
        self.metrics.is_served = lambda name: name == "" or name in self.repository.models
        self._runner = None
        self._grpc = None
        self.port_http = None
        self.port_grpc = None

    async def start(self):
        """Loads the models and starts listening; the bound ports are in port_http and port_grpc."""
        await self.repository.load()
        opts = self.options
        app = rest.build_app(self.repository, self.metrics, self.state, opts.max_body, opts.client_timeout)
        # on drain, aiohttp stops listening and then waits up to shutdown_timeout for running handlers.
        # aiohttp closes a connection still waiting for complete headers keepalive_timeout after it
        # opened or after its last answer, however slowly bytes trickle in: the header deadline.
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False,
                                     shutdown_timeout=opts.drain_seconds, keepalive_timeout=opts.client_timeout,
                                     lingering_time=LINGER_SECONDS)
        await self._runner.setup()
        sock = socket.socket(socket.AF_INET6 if ":" in opts.host else socket.AF_INET)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((opts.host, opts.port_http))
        self.port_http = sock.getsockname()[1]
        site = http_protocol.Site(self._runner, sock, self.metrics, opts.max_connections)
        await site.start()
        message_limit = opts.max_body
        self._grpc = grpc.aio.server(options=grpc_server.channel_options(message_limit, opts.client_timeout,
                                                                         opts.max_connections))
        self._grpc.add_generic_rpc_handlers(grpc_server.services(self.repository, self.metrics, self.state,
                                                                 opts.client_timeout))
        address = f"[{opts.host}]:{opts.port_grpc}" if ":" in opts.host else f"{opts.host}:{opts.port_grpc}"
        self.port_grpc = self._grpc.add_insecure_port(address)
        if self.port_grpc == 0:
            raise OSError(f"cannot listen for gRPC on {address}")
        await self._grpc.start()
        self.repository.start_polling(opts.poll_interval)
        self.state.ready = True
        log.info("listening: HTTP %s:%d, gRPC %s:%d", opts.host, self.port_http, opts.host, self.port_grpc)

    async def drain(self):
        """Stop taking requests, answer every request already received, release everything."""
        self.state.ready = False
        log.info("draining: finishing the requests already received")
        grpc_stopped = asyncio.ensure_future(self._grpc.stop(self.options.drain_seconds)) if self._grpc else None
        if self._runner is not None:
            await self._runner.cleanup()
        if grpc_stopped is not None:
            await grpc_stopped
        await self.repository.drain()
        self.executor.shutdown(wait=True)
        log.info("stopped")

    async def serve_until_signal(self, on_ready=None):
        await self.start()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        if on_ready is not None:
            on_ready(self)
        await stop.wait()
        await self.drain()
