"""Dynamic batching and the bounded queue in front of a runtime.

Requests wait in one queue per served model version. When a worker thread has no batch waiting for
it (each has the one it runs and one formed ahead, so that it never idles while the event loop is
busy), a dispatcher takes the oldest request and, when the model's first dimension is a batch,
every queued request of the same kind (same fetches, same dtypes and per-row shapes) up to
--max-batch-size rows; if another batch is still running, it first waits up to --max-queue-delay-ms
(from the oldest request's arrival) for the batch to fill, while an idle server runs what it has at
once (waiting would only add latency: requests that arrive meanwhile form the next batch). The
batch is stacked, run as one call on the worker thread, and its outputs are split row-wise back to
each request. A queue already holding --max-queue requests refuses new ones at once (Overloaded:
HTTP 429 / RESOURCE_EXHAUSTED) instead of growing.

A failure of a stacked run is retried request by request, so a request that makes the graph fail
gets its own error and never takes the others in its batch down with it.
"""

import asyncio
import collections
import time

import numpy as np


# batches formed ahead per worker (see Batcher.__init__)
BATCHES_AHEAD = 1


class Overloaded(RuntimeError):
    """The queue is full: the client should retry later."""


class Draining(RuntimeError):
    """The server is shutting down and takes no new requests."""


class _Item:
    __slots__ = ("feeds", "fetches", "rows", "key", "future", "queued_at")

    def __init__(self, feeds, fetches, rows, key, future):
        self.feeds, self.fetches, self.rows, self.key, self.future = feeds, fetches, rows, key, future
        self.queued_at = time.monotonic()


class Batcher:
    def __init__(self, runtime, executor, *, max_batch_size=1, max_queue_delay=0.0, max_queue=64,
                 workers=1, observe_batch=None, observe_queue=None):
        self.runtime = runtime
        self.executor = executor
        self.batching = runtime.batchable and max_batch_size > 1
        self.max_batch_size = max_batch_size if self.batching else 1
        self.max_queue_delay = max_queue_delay
        self.max_queue = max_queue
        self._pending = collections.deque()
        # A batch per worker waits formed and handed over, beside the one each runs: a worker that
        # finishes starts the next at once instead of idling while the event loop hands it one.
        self._slots = asyncio.Semaphore(max(1, workers) * (1 + BATCHES_AHEAD))
        self._arrived = asyncio.Event()
        self._running = set()
        # batches between start and the release of their worker slot: a finished batch's task is
        # still in _running for a moment after, and must not make the next batch wait to fill
        self._busy = 0
        self._closed = False
        self._observe_batch = observe_batch or (lambda rows, requests: None)
        self._observe_queue = observe_queue or (lambda depth: None)
        self._dispatcher = asyncio.get_running_loop().create_task(self._dispatch())

    @property
    def depth(self):
        return len(self._pending)

    async def submit(self, feeds, fetches):
        """The outputs {name: ndarray} for one checked request, once its batch has run."""
        if self._closed:
            raise Draining("the server is shutting down")
        if len(self._pending) >= self.max_queue:
            raise Overloaded(f"overloaded: {len(self._pending)} requests are already queued "
                             f"(--max-queue {self.max_queue}); retry later")
        rows = None
        if self.batching:
            leading = {v.shape[0] for v in feeds.values()}
            rows = leading.pop() if len(leading) == 1 else None
        # requests that cannot share a batch get a key of their own (id of their feeds)
        key = (tuple(fetches), tuple((n, v.dtype.str, v.shape[1:]) for n, v in sorted(feeds.items()))) \
            if rows is not None else id(feeds)
        item = _Item(feeds, fetches, rows if rows is not None else 1, key, asyncio.get_running_loop().create_future())
        self._pending.append(item)
        self._observe_queue(len(self._pending))
        self._arrived.set()
        return await item.future

    async def _dispatch(self):
        while True:
            await self._slots.acquire()
            while not self._pending:
                if self._closed:
                    self._slots.release()
                    return
                self._arrived.clear()
                await self._arrived.wait()
            # An idle server runs what it has at once: waiting would only add latency. While another
            # batch runs, more requests are likely on their way, so the batch waits to fill.
            if self.batching and self._busy and self._pending[0].rows < self.max_batch_size:
                await self._gather_more()
            batch = self._take()
            self._observe_queue(len(self._pending))
            self._busy += 1
            task = asyncio.get_running_loop().create_task(self._run(batch))
            self._running.add(task)
            task.add_done_callback(self._running.discard)

    async def _gather_more(self):
        deadline = self._pending[0].queued_at + self.max_queue_delay
        while not self._closed:
            head_key = self._pending[0].key
            rows = sum(i.rows for i in self._pending if i.key == head_key)
            left = deadline - time.monotonic()
            if rows >= self.max_batch_size or left <= 0:
                return
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), left)
            except asyncio.TimeoutError:
                return

    def _take(self):
        head = self._pending.popleft()
        batch, rows, kept = [head], head.rows, collections.deque()
        while self._pending and rows < self.max_batch_size:
            item = self._pending.popleft()
            if item.key == head.key and rows + item.rows <= self.max_batch_size:
                batch.append(item)
                rows += item.rows
            else:
                kept.append(item)
        kept.extend(self._pending)
        self._pending = kept
        return batch

    async def _run(self, batch):
        try:
            live = [i for i in batch if not i.future.done()]  # a client that went away is not run
            if not live:
                return
            loop = asyncio.get_running_loop()
            if len(live) == 1:
                await self._run_one(live[0])
                return
            feeds = {name: np.concatenate([i.feeds[name] for i in live]) for name in live[0].feeds}
            fetches = live[0].fetches
            try:
                values = await loop.run_in_executor(self.executor, self.runtime.run, feeds, fetches)
            except Exception:  # noqa: BLE001 - retried one by one so only the guilty request fails
                values = None
            total = sum(i.rows for i in live)
            if values is None or any(v.ndim == 0 or v.shape[0] != total for v in values):
                for item in live:
                    await self._run_one(item)
                return
            self._observe_batch(total, len(live))
            start = 0
            for item in live:
                if not item.future.done():
                    item.future.set_result({n: v[start:start + item.rows] for n, v in zip(fetches, values)})
                start += item.rows
        finally:
            self._busy -= 1
            self._slots.release()

    async def _run_one(self, item):
        try:
            values = await asyncio.get_running_loop().run_in_executor(
                self.executor, self.runtime.run, item.feeds, item.fetches)
        except Exception as e:  # noqa: BLE001 - handed to the request's own handler
            if not item.future.done():
                item.future.set_exception(e)
            return
        self._observe_batch(item.rows, 1)
        if not item.future.done():
            item.future.set_result(dict(zip(item.fetches, values)))

    async def drain(self):
        """Refuse new requests, finish every queued and running one, then stop."""
        self._closed = True
        self._arrived.set()
        await self._dispatcher
        while self._running:
            await asyncio.gather(*list(self._running), return_exceptions=True)
