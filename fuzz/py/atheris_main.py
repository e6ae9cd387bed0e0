"""The same cases under atheris (libFuzzer): coverage-guided instead of outcome-guided.

    .venv/bin/pip install -e '.[fuzz]'
    .venv/bin/python fuzz/py/atheris_main.py -max_total_time=600 build/fuzz-py/corpus

Each libFuzzer input is a case as run_fuzz.py saves them (GDFZ1 + mode + seed + GraphDef);
the custom mutator applies graph_mutations to the GraphDef inside, so libFuzzer's coverage
feedback steers structure-aware edits. A finding raises, which libFuzzer reports and saves
as crash-<sha1> (replay it with run_fuzz.py --replay). run_fuzz.py stays the main harness:
it keeps going after a finding and prints the counts per class.
"""

import os
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent.parent))

import atheris  # noqa: E402

with atheris.instrument_imports(include=["graphdef"]):
    import graphdef.graphrun.cli  # noqa: E402,F401
    from execute import FINDINGS, execute  # noqa: E402

from graph_mutations import mutate, mutate_bytes  # noqa: E402
from run_fuzz import decode_case, encode_case, load_seeds  # noqa: E402

from graphdef._proto import graph_pb2  # noqa: E402

WORKDIR = "/dev/shm" if os.path.isdir("/dev/shm") else "/tmp"
SEEDS = load_seeds()


class Finding(Exception):
    pass


def custom_mutator(data, max_size, seed):
    rng = random.Random(seed)
    mode, case_seed, graph_bytes = decode_case(data) if data else ("graph", 0, rng.choice(SEEDS))
    g = graph_pb2.GraphDef()
    try:
        g.ParseFromString(graph_bytes)
        mutate(g, rng)
        graph_bytes = g.SerializeToString()
    except Exception:  # noqa: BLE001 - unparsable: fall back to byte mutation
        graph_bytes = mutate_bytes(graph_bytes, rng)
    if rng.random() < 0.1:
        graph_bytes = mutate_bytes(graph_bytes, rng)
    mode = rng.choice(("graph", "graph", "graph", "cli"))
    return encode_case(mode, rng.getrandbits(64), graph_bytes)[:max(max_size, 64)]


def test_one_input(data):
    mode, seed, graph_bytes = decode_case(data)
    kind, detail = execute(mode, seed, graph_bytes, WORKDIR)
    if kind in FINDINGS:
        raise Finding(f"{kind}: {detail}")


def main():
    os.environ.setdefault("GRAPHDEF_MAX_TENSOR_BYTES", str(256 << 20))
    os.environ.setdefault("GRAPHDEF_MAX_WHILE_ITERATIONS", "10000")  # loops bounded as tensors are
    argv = sys.argv + ([] if any(a.startswith("-max_len") for a in sys.argv) else ["-max_len=1000000"])
    atheris.Setup(argv, test_one_input, custom_mutator=custom_mutator)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
