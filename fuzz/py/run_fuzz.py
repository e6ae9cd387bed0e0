"""The in-process fuzzer of graphdef's Python runtime: mutate real model files, run, classify.

    .venv/bin/python fuzz/py/run_fuzz.py --seconds 60            # short run (make fuzz-py-run)
    .venv/bin/python fuzz/py/run_fuzz.py --runs 1000000 --seed 1 --surface checkpoint   # a campaign
    .venv/bin/python fuzz/py/run_fuzz.py --replay build/fuzz-py/crashes/traceback-*.case

Surfaces (--surface, default all: each case's surface drawn from the seeded RNG, so a seed and
a count replay): graphdef (binary GraphDefs and feeds, below), and one per file reader, each a
module with seeds/mutate_case/run_case: saved_model (saved_model_cases), checkpoint
(checkpoint_cases), meta (meta_cases), sidecar (sidecar_cases), pbtxt (pbtxt_cases), images
(images_cases: encoded images through the image codec ops). Their seeds
are made once (by TensorFlow where it is importable, else by graphdef) and kept under
OUT/seeds/<surface>, so later runs start from the same bytes.

The graphdef surface's seeds are the .pb files committed under tests/, read at start. Each execution takes a
corpus entry, applies structure-aware mutations (graph_mutations) and sometimes raw byte
mutations, and runs it through the Python API or graphrun's main (execute). An input whose
outcome (class and message shape) is new joins the corpus, a cheap stand-in for coverage
feedback. Findings are written to the crashes directory; the exit status is 1 if any
occurred. Runs under RLIMIT_AS (--memory-gib) with GRAPHDEF_MAX_TENSOR_BYTES set low, so
an allocation bomb shows up as a MemoryError instead of taking the machine down.
"""

import argparse
import hashlib
import os
import re
import resource
import signal
import struct
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))
sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))

MAGIC = b"GDFZ1"
FILE_SURFACES = ("saved_model", "checkpoint", "meta", "sidecar", "pbtxt", "images")
MODES = ("graph", "cli") + FILE_SURFACES
SURFACES = ("graphdef",) + FILE_SURFACES
# bigger cases are run, not bred from: mutations of mutations would grow without end
MAX_FILE_CORPUS_BYTES = 256 << 10
# share of "all"'s cases per surface: the graphdef one is the fastest and the oldest
WEIGHTS = {"graphdef": 0.5, "saved_model": 0.1, "checkpoint": 0.1, "meta": 0.1, "sidecar": 0.1, "pbtxt": 0.1,
           "images": 0.1}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=None, help="stop after this long")
    p.add_argument("--runs", type=int, default=None, help="stop after this many executions")
    p.add_argument("--seed", type=int, default=0, help="the mutation RNG's seed")
    p.add_argument("--out", default=str(ROOT / "build" / "fuzz-py"), help="crashes/ and corpus/ go here")
    p.add_argument("--time-limit", type=float, default=10.0, help="seconds per execution before it is a hang")
    p.add_argument("--memory-gib", type=float, default=4.0, help="RLIMIT_AS for the whole fuzzer")
    p.add_argument("--tensor-limit", default=str(256 << 20), help="GRAPHDEF_MAX_TENSOR_BYTES during the fuzz")
    p.add_argument("--cli-share", type=float, default=0.25, help="fraction of executions through graphrun's main")
    p.add_argument("--report-every", type=float, default=30.0, help="seconds between progress lines")
    p.add_argument("--surface", choices=SURFACES + ("all",), default="all", help="which reader to fuzz")
    p.add_argument("--replay", nargs="*", default=None, metavar="CASE", help="rerun saved cases and classify them")
    return p.parse_args(argv)


def encode_case(mode, seed, data):
    return MAGIC + bytes([MODES.index(mode)]) + struct.pack("<Q", seed) + data


def decode_case(blob):
    if not blob.startswith(MAGIC):  # a bare .pb: run it as a graph case with seed 0
        return "graph", 0, blob
    mode = MODES[blob[len(MAGIC)] % len(MODES)]
    seed = struct.unpack("<Q", blob[len(MAGIC) + 1:len(MAGIC) + 9])[0]
    return mode, seed, blob[len(MAGIC) + 9:]


def limit_memory(gib):
    limit = int(gib * (1 << 30))
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


class Watchdog:
    """Per-execution time limit: SIGALRM raises Hang between bytecodes; a thread ends the
    process (after saving the case) if a C loop holds on well past the limit."""

    def __init__(self, seconds, on_stuck):
        from execute import Hang
        self.seconds, self.on_stuck, self.started = seconds, on_stuck, None

        def alarm(signum, frame):
            raise Hang(f"over {seconds:g} s")
        signal.signal(signal.SIGALRM, alarm)
        threading.Thread(target=self._watch, daemon=True).start()

    def start(self):
        self.started = time.monotonic()
        signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def stop(self):
        signal.setitimer(signal.ITIMER_REAL, 0)
        self.started = None

    def _watch(self):
        while True:
            time.sleep(1.0)
            started = self.started
            if started is not None and time.monotonic() - started > 3 * self.seconds + 5:
                self.on_stuck()
                os._exit(3)


_SHAPE = re.compile(r"\d+|'[^']*'|\[[^\]]*\]")


def signature(kind, detail):
    """The outcome's shape: class plus message with numbers, names and lists blanked."""
    return kind + ":" + _SHAPE.sub("#", detail)[:160]


def load_seeds():
    from graphdef._proto import graph_pb2
    seeds = []
    for path in [*sorted((ROOT / "tests").rglob("*.pb")), *sorted((ROOT / "fuzz" / "seeds").glob("*.pb"))]:
        data = path.read_bytes()
        g = graph_pb2.GraphDef()
        try:
            g.ParseFromString(data)
        except Exception:  # noqa: BLE001 - a seed that is not a GraphDef is still a fine byte seed
            pass
        seeds.append(data)
    return seeds


def surface_module(name):
    import importlib
    return importlib.import_module(f"{name}_cases")


def run_one(mode, seed, data, workdir):
    """A case of any surface: (class, detail)."""
    if mode in FILE_SURFACES:
        import random

        from execute import LAST, TRIPWIRE
        TRIPWIRE["unpickled"], LAST["exception"] = False, None
        kind, detail = surface_module(mode).run_case(data, workdir, random.Random(seed))
        if TRIPWIRE["unpickled"]:
            return "unpickled", "a pickle from a fuzzed file was loaded"
        return kind, detail
    from execute import execute
    return execute(mode, seed, data, workdir)


def replay(paths, workdir, time_limit):
    """Reruns saved cases; prints each outcome, and the traceback behind each finding or wrapped error."""
    import traceback

    from execute import FINDINGS, LAST, Hang
    watchdog = Watchdog(time_limit, lambda: print("fuzz: stuck in native code", flush=True))
    bad = 0
    for path in paths:
        mode, seed, data = decode_case(Path(path).read_bytes())
        watchdog.start()
        try:
            kind, detail = run_one(mode, seed, data, workdir)
        except Hang as exc:
            kind, detail = "hang", str(exc)
            LAST["exception"] = exc
        finally:
            watchdog.stop()
        bad += kind in FINDINGS
        print(f"{path}: {mode} seed {seed}: {kind} {detail}")
        exc = LAST["exception"]
        if (kind in FINDINGS or kind == "wrapped") and exc is not None:
            traceback.print_exception(exc.__cause__ or exc)
    return 1 if bad else 0


def graphdef_case(rng, corpus, seeds, labels, cli_share, graph_pb2, mutate, mutate_bytes):
    """(mode, seed, bytes) of a graphdef-surface case: a corpus GraphDef mutated."""
    parent = rng.choice(corpus) if rng.random() < 0.8 else rng.choice(seeds)
    g = graph_pb2.GraphDef()
    try:
        g.ParseFromString(parent)
        ok = True
    except Exception:  # noqa: BLE001
        ok = False
    if ok and rng.random() < 0.9:
        other = graph_pb2.GraphDef()
        other.ParseFromString(rng.choice(seeds))
        labels.update(mutate(g, rng, other))
        data = g.SerializeToString(deterministic=True)  # map order fixed: a seed replays a run
    else:
        data = parent
    if rng.random() < 0.12 or not ok:
        data = mutate_bytes(data, rng)
        labels["bytes"] += 1
    mode = "cli" if rng.random() < cli_share else "graph"
    seed = rng.getrandbits(64)
    return mode, seed, data


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    os.environ["GRAPHDEF_MAX_TENSOR_BYTES"] = args.tensor_limit
    # A loop whose condition stays true runs to the iteration bound; 10^6 Python iterations
    # would outlast the per-case timeout, so the fuzz bounds loops as it bounds tensors.
    os.environ["GRAPHDEF_MAX_WHILE_ITERATIONS"] = "10000"
    limit_memory(args.memory_gib)
    import random

    from execute import CLASSES, FINDINGS
    from graph_mutations import mutate, mutate_bytes

    from graphdef._proto import graph_pb2

    workdir = tempfile.mkdtemp(prefix="graphdef-fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    if args.replay is not None:
        return replay(args.replay, workdir, args.time_limit)
    out = Path(args.out)
    crashes, corpus_dir = out / "crashes", out / "corpus"
    crashes.mkdir(parents=True, exist_ok=True)
    corpus_dir.mkdir(parents=True, exist_ok=True)

    rng = random.Random(args.seed)
    surfaces = SURFACES if args.surface == "all" else (args.surface,)
    seeds = load_seeds() if "graphdef" in surfaces else []
    corpus = list(seeds)
    file_seeds = {name: surface_module(name).seeds(str(out / "seeds" / name))
                  for name in surfaces if name != "graphdef"}
    file_corpus = {name: list(made) for name, made in file_seeds.items()}
    per_surface = {name: Counter() for name in surfaces}
    seconds = Counter()
    counts, labels, seen = Counter(), Counter(), {}
    current = {"case": None}

    def save(kind, blob, detail):
        name = f"{kind}-{hashlib.sha1(blob).hexdigest()[:16]}.case"
        (crashes / name).write_bytes(blob)
        (crashes / (name + ".txt")).write_text(detail + "\n")
        return name

    def on_stuck():
        if current["case"] is not None:
            name = save("hang", current["case"], "stuck in native code past the time limit")
            print(f"fuzz: hang in native code; case saved as {crashes / name}", flush=True)

    watchdog = Watchdog(args.time_limit, on_stuck)
    start = last_report = time.monotonic()
    runs = 0
    print(f"fuzz: surfaces {', '.join(surfaces)}; seeds: " +
          ", ".join(f"{n} {len(seeds) if n == 'graphdef' else len(file_seeds[n])}" for n in surfaces) +
          f"; tensor limit {args.tensor_limit} bytes, "
          f"RLIMIT_AS {args.memory_gib:g} GiB, {args.time_limit:g} s per execution", flush=True)
    while True:
        now = time.monotonic()
        if args.runs is not None and runs >= args.runs:
            break
        if args.seconds is not None and now - start >= args.seconds:
            break
        # -- make a case
        surface = surfaces[0] if len(surfaces) == 1 else rng.choices(surfaces, [WEIGHTS[n] for n in surfaces])[0]
        if surface != "graphdef":
            pool = file_corpus[surface] if rng.random() < 0.8 else file_seeds[surface]
            mode, seed = surface, rng.getrandbits(64)
            try:
                data = surface_module(surface).mutate_case(rng, rng.choice(pool))
            except Exception as exc:  # noqa: BLE001 - the harness's own mistake: say so, stop
                raise SystemExit(f"fuzz: the {surface} mutator failed: {type(exc).__name__}: {exc}") from None
            labels[surface] += 1
        else:
            mode, seed, data = graphdef_case(rng, corpus, seeds, labels, args.cli_share, graph_pb2, mutate,
                                             mutate_bytes)
        blob = encode_case(mode, seed, data)
        blob = encode_case(mode, seed, data)
        # -- run it
        current["case"] = blob
        case_start = time.monotonic()
        watchdog.start()
        try:
            kind, detail = run_one(mode, seed, data, workdir)
        except BaseException as exc:  # noqa: BLE001 - the timer's Hang, raised outside execute's try
            from execute import Hang
            if not isinstance(exc, Hang):
                raise
            kind, detail = "hang", str(exc)
        finally:
            watchdog.stop()
        current["case"] = None
        runs += 1
        counts[kind] += 1
        per_surface[surface][kind] += 1
        seconds[surface] += time.monotonic() - case_start
        sig = signature(kind, detail.replace(workdir, "WORKDIR"))  # its random name would make runs differ
        if sig not in seen:
            seen[sig] = detail
            if kind in FINDINGS:
                name = save(kind, blob, f"{mode} seed {seed}: {detail}")
                print(f"fuzz: FINDING {kind}: {detail[:240]} -> {name}", flush=True)
            elif kind == "wrapped":  # clean, but numpy's words: kept so that --replay shows where they come from
                save(kind, blob, f"{mode} seed {seed}: {detail}")
            if kind in FINDINGS:
                pass
            elif surface != "graphdef":
                if len(file_corpus[surface]) < 5000 and len(data) <= MAX_FILE_CORPUS_BYTES:
                    file_corpus[surface].append(data)
                    where = out / f"corpus-{surface}"  # beside corpus/, which atheris_main.py reads as GraphDefs
                    where.mkdir(exist_ok=True)
                    (where / f"{hashlib.sha1(data).hexdigest()[:16]}.case").write_bytes(data)
            elif len(corpus) < 20000:
                corpus.append(data)
                (corpus_dir / f"{hashlib.sha1(data).hexdigest()[:16]}.pb").write_bytes(data)
        if now - last_report >= args.report_every:
            last_report = now
            rate = runs / max(now - start, 1e-9)
            print(f"fuzz: {runs} runs, {rate:.0f}/s, corpus {len(corpus)}, " +
                  ", ".join(f"{k} {counts[k]}" for k in CLASSES), flush=True)
    elapsed = time.monotonic() - start
    print(f"fuzz: done: {runs} executions in {elapsed:.0f} s ({runs / max(elapsed, 1e-9):.0f}/s), "
          f"corpus {len(corpus)} ({len(seeds)} seeds), distinct outcomes {len(seen)}")
    for k in CLASSES:
        print(f"  {k:10s} {counts[k]}")
    for name in surfaces:
        size = len(corpus) if name == "graphdef" else len(file_corpus[name])
        print(f"  surface {name}: {sum(per_surface[name].values())} runs in {seconds[name]:.0f} s, corpus {size}, " +
              ", ".join(f"{k} {v}" for k, v in sorted(per_surface[name].items())))
    wrapped = [d for s, d in seen.items() if s.startswith("wrapped:")]
    if wrapped:
        print(f"  distinct wrapped numpy messages: {len(wrapped)} (e.g. {wrapped[0][:160]})")
    findings = sum(counts[k] for k in FINDINGS)
    if findings:
        print(f"fuzz: {findings} findings; cases in {crashes} (rerun: run_fuzz.py --replay FILE)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
