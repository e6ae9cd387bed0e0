"""What the file-reader surfaces share: a case is a small tree of files packed into bytes (so
a seed and a count replay, and a finding is one file), written out and run through graphrun's
main in-process, its outcome classified as execute.py classifies the cli mode.
"""

import os
import shutil
import struct

from graph_mutations import mutate_bytes


def pack(files):
    """{relative path: bytes} -> bytes: per file a u16 name length, the name, a u32 size, the bytes."""
    out = bytearray()
    for name in sorted(files):
        raw = name.encode()
        out += struct.pack("<H", len(raw)) + raw + struct.pack("<I", len(files[name])) + files[name]
    return bytes(out)


def unpack(blob):
    """pack's inverse; a damaged pack (a raw byte mutation of a replayed case) keeps what parses."""
    files, pos = {}, 0
    while pos + 2 <= len(blob):
        (n,) = struct.unpack_from("<H", blob, pos)
        name = blob[pos + 2:pos + 2 + n].decode("utf-8", "replace")
        pos += 2 + n
        if pos + 4 > len(blob):
            break
        (size,) = struct.unpack_from("<I", blob, pos)
        files[name] = blob[pos + 4:pos + 4 + size]
        pos += 4 + size
    return files


def read_tree(folder):
    files = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                files[os.path.relpath(path, folder)] = f.read()
    return files


def write_tree(workdir, files):
    """Writes the files under workdir/case (emptied first); names escaping it are dropped."""
    folder = os.path.join(workdir, "case")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for name, data in files.items():
        path = os.path.normpath(os.path.join(folder, name))
        if not path.startswith(folder + os.sep) or not name:
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    return folder


def cached_seeds(cache, make):
    """Seeds made once per machine and kept under `cache` (build/fuzz-py/seeds/<surface>): the
    same bytes on every run, so a seed and a count replay; `make(folder)` returns packs."""
    os.makedirs(cache, exist_ok=True)
    names = sorted(n for n in os.listdir(cache) if n.endswith(".case"))
    if not names:
        for k, blob in enumerate(make(os.path.join(cache, "work"))):
            with open(os.path.join(cache, f"{k:03d}.case"), "wb") as f:
                f.write(blob)
        shutil.rmtree(os.path.join(cache, "work"), ignore_errors=True)
        names = sorted(n for n in os.listdir(cache) if n.endswith(".case"))
    seeds = []
    for name in names:
        with open(os.path.join(cache, name), "rb") as f:
            seeds.append(f.read())
    return seeds


def mutate_one_file(rng, files, names=None):
    """Plain byte mutations of one of the files (of `names` when given)."""
    choices = sorted(n for n in files if names is None or n in names)
    if choices:
        name = rng.choice(choices)
        files[name] = mutate_bytes(files[name], rng)
    return files
