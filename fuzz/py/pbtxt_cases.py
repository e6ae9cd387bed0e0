"""run_fuzz.py's "pbtxt" surface: text-format GraphDefs (.pbtxt) through graphrun.

Seeds are small GraphDefs committed under tests/ printed as text (protobuf's text_format).
Mutations are textual, aimed at what a text parser must bound: deep nesting, a field repeated
many times, numbers past every integer and float range, escapes that are bad or past a byte,
long strings, unbalanced braces, and plain byte mutations. Each case runs `graphrun run` (and
sometimes `inspect`) on model.pbtxt.
"""

import os
import re
from pathlib import Path

from execute import run_graphrun
from file_cases import cached_seeds, mutate_one_file, pack, unpack, write_tree
from google.protobuf import text_format

from graphdef._proto import graph_pb2

ROOT = Path(__file__).resolve().parent.parent.parent
MAX_SEED_BYTES = 4000
NUMBERS = ["99999999999999999999999", "-9223372036854775809", "9223372036854775807", "1e99999", "-inf", "nan",
           "0x7fffffffffffffff", "-0", "1.7976931348623157e309", "4294967296", "0777777777777777777777777"]
ESCAPES = ["\\x", "\\xZZ", "\\777", "\\q", "\\", "\\u12", "\\xff\\xfe", "\\0", "\\U0010ffff", "\\\n"]
_NUMBER = re.compile(r"(?<=: )-?\d+(\.\d+)?(e-?\d+)?")
_STRING = re.compile(r'"([^"\\]|\\.)*"')


def _make(_folder):
    made = []
    for path in sorted((ROOT / "tests").rglob("*.pb")):
        if path.stat().st_size > MAX_SEED_BYTES:
            continue
        graph_def = graph_pb2.GraphDef()
        try:
            graph_def.ParseFromString(path.read_bytes())
        except Exception:  # noqa: BLE001 - a .pb that is not a GraphDef is no text seed
            continue
        if graph_def.node:
            made.append(pack({"model.pbtxt": text_format.MessageToString(graph_def).encode()}))
        if len(made) >= 24:
            break
    return made


def seeds(cache):
    return cached_seeds(cache, _make)


def _text(rng, text):
    what = rng.randrange(7)
    if what == 0:
        depth = rng.choice([50, 99, 100, 101, 1000, 5000])
        nest = 'attr { key: "a" value { list { func { name: "f" ' * depth + "} } } }" * depth
        at = text.find("}")
        return text[:at] + nest + text[at:] if at >= 0 else nest + text
    if what == 1:
        lines = text.splitlines(keepends=True)
        line = rng.choice(lines)[:300] if lines else "input: \"x\"\n"
        return text + line * rng.choice([10, 100, 2000, 20000])
    if what == 2:
        spans = list(_NUMBER.finditer(text))
        if spans:
            m = rng.choice(spans)
            return text[:m.start()] + rng.choice(NUMBERS) + text[m.end():]
    if what == 3:
        spans = list(_STRING.finditer(text))
        if spans:
            m = rng.choice(spans)
            return text[:m.end() - 1] + rng.choice(ESCAPES) + text[m.end() - 1:]
    if what == 4:
        spans = list(_STRING.finditer(text))
        if spans:
            m = rng.choice(spans)
            return text[:m.end() - 1] + "a" * rng.choice([1000, 100000, 1000000]) + text[m.end() - 1:]
    if what == 5:
        at = rng.randrange(len(text) + 1)
        return text[:at] + rng.choice(["{", "}", "<", ">", "[", "]", ":", '"', "#", "\x00"]) + text[at:]
    return text[:rng.randrange(len(text) + 1)]


def mutate_case(rng, blob):
    files = unpack(blob)
    if "model.pbtxt" in files and rng.random() < 0.8:
        text = files["model.pbtxt"].decode("utf-8", "replace")
        for _ in range(rng.randint(1, 2)):
            text = _text(rng, text)
        files["model.pbtxt"] = text.encode("utf-8", "surrogatepass")[:2 << 20]
        return pack(files)
    return pack(mutate_one_file(rng, files))


def run_case(blob, workdir, rng):
    folder = write_tree(workdir, unpack(blob))
    model = os.path.join(folder, "model.pbtxt")
    if rng.random() < 0.25:
        return run_graphrun(["inspect", model])
    return run_graphrun(["run", model, "--random"])
