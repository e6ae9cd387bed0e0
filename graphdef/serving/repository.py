"""What is served: one model file, or a repository folder polled for new versions.

A repository is a folder with one subfolder per model and numbered version folders inside,
each holding model.pb (or model.pbtxt):

    models/
      digits/1/model.pb
      digits/2/model.pb     <- served: the highest number

A poller looks for a higher version every --poll-interval seconds. The new version is loaded on a
worker thread while the old one keeps serving; then new requests go to the new version and the old
version's queue drains before it is dropped, so no request is lost across the switch. A version
that fails to load is logged once and the old one stays.
"""

import asyncio
import logging
import os
from pathlib import Path

from graphdef.serving.batching import Batcher
from graphdef.serving.runtime import loader
from graphdef.serving.tensors import NotFound, shown

MODEL_FILES = ("model.pb", "model.pbtxt")
log = logging.getLogger("graphdef.serving")


class ServedVersion:
    def __init__(self, name, version, runtime, batcher):
        self.name, self.version, self.runtime, self.batcher = name, version, runtime, batcher


class ServedModel:
    def __init__(self, name):
        self.name = name
        self.current = None     # the ServedVersion new requests go to
        self.versions = {}      # every loaded version, the old ones until drained

    def get(self, version=None):
        if version in (None, "", 0, "0"):
            if self.current is None:
                raise NotFound(f"model '{self.name}' has no version ready")
            return self.current
        try:
            number = int(version)
        except (TypeError, ValueError):
            raise NotFound(f"model '{self.name}' has no version '{shown(version)}'") from None
        if number not in self.versions:
            loaded = ", ".join(str(v) for v in sorted(self.versions)) or "none"
            raise NotFound(f"model '{self.name}' has no version {number} (loaded: {loaded})")
        return self.versions[number]


def model_file(folder):
    for name in MODEL_FILES:
        if (folder / name).is_file():
            return folder / name
    return None


def scan(root):
    """{model name: {version: model file}} in a repository folder."""
    found = {}
    for model_dir in sorted(p for p in Path(root).iterdir() if p.is_dir()):
        versions = {}
        for version_dir in model_dir.iterdir():
            if version_dir.is_dir() and version_dir.name.isdigit() and model_file(version_dir):
                versions[int(version_dir.name)] = model_file(version_dir)
        if versions:
            found[model_dir.name] = versions
    return found


class Repository:
    """The served models; `path` is a model file (served as NAME, version 1) or a repository folder."""

    def __init__(self, path, options, executor, metrics, name=None):
        self.path = Path(path)
        self.options = options
        self.executor = executor
        self.metrics = metrics
        self.models = {}
        self.is_folder = self.path.is_dir()
        self.single_name = name or self.path.name.split(".")[0]
        self._failed = set()
        self._poller = None

    def get(self, name, version=None):
        model = self.models.get(name)
        if model is None:
            known = ", ".join(sorted(self.models)) or "none"
            raise NotFound(f"no model named '{shown(name)}' (served: {known})")
        return model.get(version)

    async def load(self):
        """Loads what is there now; raises if nothing can be served."""
        if self.is_folder:
            await self.refresh()
            if not self.models:
                raise ValueError(f"{self.path}: no model found (expected NAME/VERSION/model.pb)")
        else:
            await self._load_version(self.single_name, 1, self.path)

    async def refresh(self):
        for name, versions in scan(self.path).items():
            newest = max(versions)
            model = self.models.get(name)
            if model is not None and model.current is not None and model.current.version >= newest:
                continue
            if (name, newest, _mtime(versions[newest])) in self._failed:
                continue
            try:
                await self._load_version(name, newest, versions[newest])
            except Exception as e:  # noqa: BLE001 - the old version keeps serving
                self._failed.add((name, newest, _mtime(versions[newest])))
                log.error("model %s version %d not loaded: %s", name, newest, " ".join(str(e).split()))

    async def _load_version(self, name, version, path):
        loop = asyncio.get_running_loop()
        opts = self.options
        load = loader(opts.runtime, opts.fallback, instances=opts.workers, threads=opts.threads)
        runtime = await loop.run_in_executor(self.executor, load, path)
        batcher = Batcher(runtime, self.executor, max_batch_size=opts.max_batch_size,
                          max_queue_delay=opts.max_queue_delay_ms / 1000.0, max_queue=opts.max_queue,
                          workers=opts.workers,
                          observe_batch=lambda rows, requests: self.metrics.batch(name, rows),
                          observe_queue=lambda depth: self.metrics.queue_depth(name, version, depth))
        model = self.models.setdefault(name, ServedModel(name))
        previous = model.current
        model.versions[version] = ServedVersion(name, version, runtime, batcher)
        model.current = model.versions[version]
        log.info("serving model %s version %d from %s (%s, batching %s)", name, version, path, runtime.kind,
                 f"up to {batcher.max_batch_size} rows" if batcher.batching else "off")
        log.info("model %s version %d runs %s", name, version, _workers_text(runtime, opts.workers))
        if previous is not None:
            loop.create_task(self._retire(model, previous))

    async def _retire(self, model, old):
        await old.batcher.drain()
        model.versions.pop(old.version, None)
        self.metrics.queue_depth(model.name, old.version, None)
        log.info("model %s version %d unloaded", model.name, old.version)

    def start_polling(self, interval):
        if self.is_folder and interval > 0:
            self._poller = asyncio.get_running_loop().create_task(self._poll(interval))

    async def _poll(self, interval):
        while True:
            await asyncio.sleep(interval)
            try:
                await self.refresh()
            except OSError as e:
                log.error("cannot read the repository %s: %s", self.path, e)

    async def drain(self):
        if self._poller is not None:
            self._poller.cancel()
        await asyncio.gather(*(v.batcher.drain() for m in self.models.values() for v in list(m.versions.values())))


def _workers_text(runtime, workers):
    """How the model's batches run: "2 batches at once, each on a load of its own with 1 OpenMP thread"."""
    models = getattr(runtime, "models", None)
    at_once = f"{workers} batch{'es' if workers != 1 else ''} at once"
    if models is None:
        return at_once + " (graphdef's Session per worker thread)"
    threads = f"{runtime.threads} OpenMP thread{'s' if runtime.threads != 1 else ''}" if runtime.threads \
        else "OpenMP's default threads"
    return f"{len(models)} batch{'es' if len(models) != 1 else ''} at once, each on a load of its own with {threads}"


def _mtime(path):
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None
