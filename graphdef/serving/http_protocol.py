"""aiohttp's connection handling with graphrun serve's error answers, write deadline and connection limit.

A request aiohttp cannot parse (a bad request line, a header over its limits, a body longer than its
Content-Length running into the next request) never reaches the application: aiohttp answers it
itself, as several lines of text echoing the bytes, and logs a traceback. Here such a request gets
the server's own answer instead: its status, one JSON line naming the problem, an access log entry,
and no traceback. aiohttp is pinned (pyproject.toml), so the site below may use its internals.

aiohttp bounds the wait for a request (its keep-alive timeout) but not the wait for a client to take
its answer: one that never reads would hold its connection and the answer's bytes for ever. Here a
connection whose unsent bytes do not shrink for a client timeout is aborted, and connections past a
limit are answered 503 at once instead of being served.
"""

import asyncio
import json
import logging
import resource
from http import HTTPStatus

from aiohttp import web
from aiohttp.web_protocol import RequestHandler
from prometheus_client import Counter, Gauge

from graphdef.serving.tensors import shown

log = logging.getLogger("graphdef.serving")

DETAIL_SHOWN = 200
# seconds a refused connection (over the limit) is kept after its 503, so that the client reads the
# answer rather than a reset caused by the request bytes it is still sending
REFUSED_LINGER = 1.0


def default_max_connections():
    """1000 HTTP connections, or half the open-file limit when that is lower: the other half is left
    to gRPC's connections, the model files and the server's own."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return 1000 if soft == resource.RLIM_INFINITY else max(8, min(1000, soft // 2))


class Connections:
    """One server's HTTP connections: counted against the limit and shown in /metrics."""

    def __init__(self, metrics, limit):
        self.limit = limit
        self.count = 0
        self._open = Gauge("graphdef_serve_http_connections", "HTTP connections open", registry=metrics.registry)
        self._dropped = Counter("graphdef_serve_http_connections_dropped",
                                "HTTP connections the server closed or refused: a client that did not read its "
                                "answer (write_timeout), a connection over the limit (over_limit)", ["reason"],
                                registry=metrics.registry)
        for reason in ("write_timeout", "over_limit"):
            self._dropped.labels(reason)

    def opened(self):
        self.count += 1
        self._open.set(self.count)

    def closed(self):
        self.count -= 1
        self._open.set(self.count)

    def dropped(self, reason):
        self._dropped.labels(reason).inc()


def _detail(status, exc, message):
    text = str(message or exc or HTTPStatus(status).phrase)
    return shown(" ".join(text.split()))[:DETAIL_SHOWN]


class _Handler(RequestHandler):
    """One connection; answers what aiohttp's parser refuses as the application answers errors."""

    metrics = None  # the server's Metrics, set on the subclass made for each server
    connections = None  # the server's Connections, likewise

    def connection_made(self, transport):
        # aiohttp forgets its transport on force_close, while the bytes of a last answer may still wait
        # for the client: the write deadline keeps its own reference until the connection is lost
        self._socket = transport
        self._unsent = 0
        self._progress_check = None
        # pause (and so start the deadline) whenever any byte waits, also after the last write of a
        # connection that is closing; aiohttp's writer then waits for the client to take everything
        transport.set_write_buffer_limits(high=0)
        super().connection_made(transport)

    def connection_lost(self, exc):
        self._stop_progress_check()
        self.connections.closed()
        super().connection_lost(exc)

    def pause_writing(self):
        super().pause_writing()
        self._unsent = self._socket.get_write_buffer_size()
        self._progress_check = self._loop.call_later(self.keepalive_timeout, self._check_progress)

    def resume_writing(self):
        self._stop_progress_check()
        super().resume_writing()

    def _stop_progress_check(self):
        if self._progress_check is not None:
            self._progress_check.cancel()
            self._progress_check = None

    def _check_progress(self):
        """The client must take some of the waiting bytes every client timeout (as a proxy's send
        timeout): a client that stopped reading, or a peer gone without closing, is aborted."""
        unsent = self._socket.get_write_buffer_size()
        if unsent and unsent >= self._unsent:
            self._progress_check = None
            self.connections.dropped("write_timeout")
            peer = self._socket.get_extra_info("peername")
            log.info("closed the connection from %s: it took none of the %d bytes waiting for it in %g s "
                     "(--client-timeout)", peer[0] if peer else "?", unsent, self.keepalive_timeout)
            self._socket.abort()
            return
        self._unsent = unsent
        self._progress_check = self._loop.call_later(self.keepalive_timeout, self._check_progress)

    def handle_error(self, request, status=500, exc=None, message=None):
        if request.writer.output_size > 0:
            raise ConnectionError("an answer was already under way: the connection is dropped")
        if status >= 500:
            error, kind = f"internal error: {type(exc).__name__ if exc else status}: {_detail(status, exc, message)}", \
                "internal"
        else:
            error, kind = f"malformed HTTP request: {_detail(status, exc, message)}", "http"
        response = web.Response(status=status, body=json.dumps({"error": error}).encode(),
                                content_type="application/json")
        response.force_close()
        if self.metrics is not None:
            self.metrics.request("http", "", status, kind, 0.0, peer=request.remote, error_detail=error)
        return response


class _Refused(asyncio.Protocol):
    """A connection over the limit: answered 503 in one JSON line before its request is read, then closed."""

    def __init__(self, connections, metrics):
        self.connections, self.metrics = connections, metrics
        self._abort = None

    def connection_made(self, transport):
        error = (f"the server has its limit of {self.connections.limit} HTTP connections open "
                 "(--max-connections); try again later, or reuse a connection")
        self.connections.dropped("over_limit")
        body = json.dumps({"error": error}).encode()
        transport.write(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                        b"Retry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        transport.write_eof()
        self._abort = asyncio.get_running_loop().call_later(REFUSED_LINGER, transport.abort)
        if self.metrics is not None:
            peer = transport.get_extra_info("peername")
            self.metrics.request("http", "", 503, "unavailable", 0.0, peer=peer[0] if peer else None,
                                 error_detail=error)

    def data_received(self, data):
        pass  # the request is not served

    def eof_received(self):
        return False  # the client has read the answer and closed: close too

    def connection_lost(self, exc):
        self._abort.cancel()


class Site(web.SockSite):
    """A SockSite whose connections are _Handler's, reporting to `metrics`, at most `max_connections`
    at a time (default_max_connections() when None)."""

    def __init__(self, runner, sock, metrics, max_connections=None):
        super().__init__(runner, sock)
        limit = default_max_connections() if max_connections is None else max_connections
        self._connections = Connections(metrics, limit)
        self._handler_class = type("Handler", (_Handler,), {"metrics": metrics, "connections": self._connections})
        self._metrics = metrics

    async def start(self):
        await web.BaseSite.start(self)
        server = self._runner.server
        handler_class, connections, metrics = self._handler_class, self._connections, self._metrics

        def connection():
            # counted here rather than in connection_made: asyncio accepts a burst of connections
            # before any of them is made, and each must see those before it
            if connections.count >= connections.limit:
                return _Refused(connections, metrics)
            connections.opened()
            return handler_class(server, loop=server._loop, **server._kwargs)

        self._server = await asyncio.get_running_loop().create_server(connection, sock=self._sock,
                                                                      backlog=self._backlog)
