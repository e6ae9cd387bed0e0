"""Prometheus metrics (/metrics) and the structured access log (one JSON object per request)."""

import json
import logging
import time

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client import CONTENT_TYPE_LATEST

access_log = logging.getLogger("graphdef.serving.access")

LATENCY_BUCKETS = (.0005, .001, .002, .005, .01, .02, .05, .1, .2, .5, 1, 2, 5, 10)
UNKNOWN_MODEL = "(unknown)"
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


class Metrics:
    """One registry per server (several servers can live in one process, as in tests)."""

    content_type = CONTENT_TYPE_LATEST

    def __init__(self):
        self.registry = CollectorRegistry()
        self.requests = Counter("graphdef_serve_requests", "Requests answered, by protocol, model and status code",
                                ["protocol", "model", "code"], registry=self.registry)
        self.errors = Counter("graphdef_serve_errors", "Requests answered with an error, by kind",
                              ["protocol", "model", "kind"], registry=self.registry)
        self.latency = Histogram("graphdef_serve_request_seconds", "Time from request to answer",
                                 ["protocol", "model"], buckets=LATENCY_BUCKETS, registry=self.registry)
        self.batch_rows = Histogram("graphdef_serve_batch_rows", "Rows per executed batch", ["model"],
                                    buckets=BATCH_BUCKETS, registry=self.registry)
        self._children = {}
        # the server's test of a model name: a name no model has is counted under UNKNOWN_MODEL, so
        # clients sending made-up names cannot grow the registry (and the server's memory) without end
        self.is_served = lambda name: True
        self.queue = Gauge("graphdef_serve_queue_depth", "Requests waiting for a batch", ["model", "version"],
                           registry=self.registry)

    def _child(self, metric, *labels):
        # labels() hashes and validates its arguments on every call; the children are kept instead
        key = (id(metric),) + labels
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    def request(self, protocol, model, code, kind, seconds, **fields):
        """Counts and logs one answered request; `kind` is None for a success."""
        model = model or ""
        label = model if self.is_served(model) else UNKNOWN_MODEL
        self._child(self.requests, protocol, label, str(code)).inc()
        if kind is not None:
            self._child(self.errors, protocol, label, kind).inc()
        self._child(self.latency, protocol, label).observe(seconds)
        if access_log.isEnabledFor(logging.INFO):
            entry = {"time": round(time.time(), 6), "protocol": protocol, "model": model, "status": code,
                     "ms": round(seconds * 1000, 3)}
            entry.update(fields)
            if kind is not None:
                entry["error"] = kind
            access_log.info(json.dumps(entry, separators=(",", ":")))

    def batch(self, model, rows):
        self._child(self.batch_rows, model).observe(rows)

    def queue_depth(self, model, version, depth):
        if depth is None:
            self._children.pop((id(self.queue), model, str(version)), None)
            try:
                self.queue.remove(model, str(version))
            except KeyError:
                pass
        else:
            self._child(self.queue, model, str(version)).set(depth)

    def exposition(self):
        return generate_latest(self.registry)
