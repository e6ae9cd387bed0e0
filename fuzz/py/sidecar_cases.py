"""run_fuzz.py's "sidecar" surface: GraphDefs whose Const values live in a .weights file.

Seeds are graphdef-written models with external weights (TensorFlow writes no such file).
Mutations go at the reference (attr _external_value: file name, tag, offset, length, crc32c),
at the stub value's dtype and shape, or at the weights file (its header fields, its length, its
bytes). Each case runs `graphrun run model.pb --random`.
"""

import os

import numpy as np
from file_cases import cached_seeds, mutate_one_file, pack, read_tree, unpack

from graphdef._proto import graph_pb2
from graphdef.wire.external_weights import ATTR

NAMES = [b"model.weights", b"../model.weights", b"/dev/zero", b"", b".", b"..", b"model.weights\0x",
         b"sub/model.weights", b"other.weights", b"model.pb", b"\xff\xfe", b"a" * 5000, b"model.weights\\x"]
NUMBERS = [0, 63, 64, 128, -64, 4096, 4160, 1 << 32, 1 << 40, (1 << 63) - 64, (1 << 63) - 1, -(1 << 63)]


def _model(folder, sizes):
    import graphdef as gd
    graph = gd.Graph()
    with graph.as_default():
        x = gd.placeholder(gd.float32, [1, sizes[0]], name="x")
        y = x
        for k, (n, m) in enumerate(zip(sizes, sizes[1:])):
            w = gd.constant(np.linspace(-1, 1, n * m, dtype=np.float32).reshape(n, m), name=f"w{k}")
            y = gd.nn.relu(gd.matmul(y, w), name=f"y{k}")
    gd.io.write_graph(graph, folder, "model.pb", as_text=False, external_weights=True, external_threshold=64)
    return pack(read_tree(folder))


def seeds(cache):
    return cached_seeds(cache, lambda folder: [_model(os.path.join(folder, "a"), [16, 8]),
                                               _model(os.path.join(folder, "b"), [32, 16, 4])])


def _reference(rng, node):
    ref = node.attr[ATTR].list
    what = rng.randrange(6)
    if what == 0 and ref.s:
        ref.s[0] = rng.choice(NAMES)
    elif what == 1 and len(ref.s) > 1:
        ref.s[1] = rng.choice([b"", b"0" * 32, b"g" * 32, ref.s[1][::-1]])
    elif what == 2 and ref.i:
        k = rng.randrange(len(ref.i))
        value = rng.choice(NUMBERS + [ref.i[k] + rng.choice([-64, -1, 1, 64])])
        ref.i[k] = max(min(value, (1 << 63) - 1), -(1 << 63))  # an int64 field
    elif what == 3:
        if rng.random() < 0.5 and ref.i:
            del ref.i[-1]
        else:
            ref.s.append(b"extra")
    elif what == 4:
        shape = node.attr["value"].tensor.tensor_shape
        if shape.dim:
            rng.choice(shape.dim).size = rng.choice([0, -1, 3, 1 << 31, (1 << 62)])
    else:
        node.attr["value"].tensor.dtype = node.attr["dtype"].type = rng.choice([1, 2, 3, 9, 10, 14, 7, 21])


def mutate_case(rng, blob):
    files = unpack(blob)
    if "model.pb" in files and rng.random() < 0.6:
        graph_def = graph_pb2.GraphDef()
        try:
            graph_def.ParseFromString(files["model.pb"])
        except Exception:  # noqa: BLE001 - bytes an earlier mutation broke: mutate them further
            return pack(mutate_one_file(rng, files))
        external = [n for n in graph_def.node if ATTR in n.attr]
        if external:
            for _ in range(rng.randint(1, 2)):
                _reference(rng, rng.choice(external))
        files["model.pb"] = graph_def.SerializeToString(deterministic=True)
        return pack(files)
    if "model.weights" in files and rng.random() < 0.5:
        data = bytearray(files["model.weights"])
        at = rng.choice([0, 8, 12, 16, 24, 40, rng.randrange(len(data) + 1)])
        data[at:at + 8] = rng.getrandbits(64).to_bytes(8, "little")
        files["model.weights"] = bytes(data[:rng.choice([len(data), len(data), 63, rng.randrange(len(data) + 1)])])
        return pack(files)
    return pack(mutate_one_file(rng, files))


def run_case(blob, workdir, rng):
    from execute import run_graphrun
    from file_cases import write_tree
    folder = write_tree(workdir, unpack(blob))
    return run_graphrun(["run", os.path.join(folder, "model.pb"), "--random"])
