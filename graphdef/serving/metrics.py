"""Prometheus metrics (/metrics) and the structured access log (one JSON object per request)."""

import json
import logging
import time

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client import CONTENT_TYPE_LATEST

access_log = logging.getLogger("graphdef.serving.access")

LATENCY_BUCKETS = (.0005, .001, .002, .005, .01, .02, .05, .1, .2, .5, 1, 2, 5, 10)
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
        self.queue = Gauge("graphdef_serve_queue_depth", "Requests waiting for a batch", ["model", "version"],
                           registry=self.registry)

    def request(self, protocol, model, code, kind, seconds, **fields):
        """Counts and logs one answered request; `kind` is None for a success."""
        model = model or ""
        self.requests.labels(protocol, model, str(code)).inc()
        if kind is not None:
            self.errors.labels(protocol, model, kind).inc()
        self.latency.labels(protocol, model).observe(seconds)
        if access_log.isEnabledFor(logging.INFO):
            entry = {"time": round(time.time(), 6), "protocol": protocol, "model": model, "status": code,
                     "ms": round(seconds * 1000, 3)}
            entry.update(fields)
            if kind is not None:
                entry["error"] = kind
            access_log.info(json.dumps(entry, separators=(",", ":")))

    def batch(self, model, rows):
        self.batch_rows.labels(model).observe(rows)

    def queue_depth(self, model, version, depth):
        if depth is None:
            try:
                self.queue.remove(model, str(version))
            except KeyError:
                pass
        else:
            self.queue.labels(model, str(version)).set(depth)

    def exposition(self):
        return generate_latest(self.registry)
