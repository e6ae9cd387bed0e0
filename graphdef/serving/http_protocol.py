"""aiohttp's connection handling with graphrun serve's error answers.

A request aiohttp cannot parse (a bad request line, a header over its limits, a body longer than its
Content-Length running into the next request) never reaches the application: aiohttp answers it
itself, as several lines of text echoing the bytes, and logs a traceback. Here such a request gets
the server's own answer instead: its status, one JSON line naming the problem, an access log entry,
and no traceback. aiohttp is pinned (pyproject.toml), so the site below may use its internals.
"""

import asyncio
import json
from http import HTTPStatus

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

from graphdef.serving.tensors import shown

DETAIL_SHOWN = 200


def _detail(status, exc, message):
    text = str(message or exc or HTTPStatus(status).phrase)
    return shown(" ".join(text.split()))[:DETAIL_SHOWN]


class _Handler(RequestHandler):
    """One connection; answers what aiohttp's parser refuses as the application answers errors."""

    metrics = None  # the server's Metrics, set on the subclass made for each server

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


class Site(web.SockSite):
    """A SockSite whose connections are _Handler's, reporting to `metrics`."""

    def __init__(self, runner, sock, metrics):
        super().__init__(runner, sock)
        self._handler_class = type("Handler", (_Handler,), {"metrics": metrics})

    async def start(self):
        await web.BaseSite.start(self)
        server = self._runner.server
        handler_class = self._handler_class

        def connection():
            return handler_class(server, loop=server._loop, **server._kwargs)

        self._server = await asyncio.get_running_loop().create_server(connection, sock=self._sock,
                                                                      backlog=self._backlog)
