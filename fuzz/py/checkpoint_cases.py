"""run_fuzz.py's "checkpoint" surface: the V2 checkpoint under a SavedModel's variables/.

Seeds are the saved_model surface's exports (TensorFlow's and graphdef's). Mutations go at the
checkpoint's structure: the SSTable index is parsed and rebuilt with a BundleEntryProto or the
header changed (offsets, sizes, shard ids, crc32c, dtype, shape dims, shard count, endianness),
or entries dropped and added; or the index's or a shard's bytes are cut, flipped or extended
(footer handles, block trailers and crcs then lie). Each case runs `graphrun run --random`.
"""

import saved_model_cases
from file_cases import mutate_one_file, pack, unpack

from graphdef._proto import tensor_bundle_pb2
from graphdef.wire import sstable

INDEX = "variables/variables.index"
BIG = [0, 1, -1, 24, 64, 1 << 31, (1 << 32) + 1, 1 << 40, (1 << 63) - 1, -(1 << 63)]


def seeds(cache):
    return saved_model_cases.seeds(cache)


def _int64(value):
    return max(min(value, (1 << 63) - 1), -(1 << 63))


def _entry(rng, proto):
    field = rng.randrange(7)
    if field == 0:
        proto.offset = _int64(rng.choice(BIG + [proto.offset + rng.randint(-8, 8)]))
    elif field == 1:
        proto.size = _int64(rng.choice(BIG + [proto.size + rng.randint(-8, 8)]))
    elif field == 2:
        proto.shard_id = rng.choice([0, 1, 7, (1 << 31) - 1])
    elif field == 3:
        proto.crc32c = rng.getrandbits(32)
    elif field == 4:
        proto.dtype = rng.choice([0, 1, 3, 7, 10, 14, 20, 21, 99, 1000])
    elif field == 5:
        if proto.shape.dim and rng.random() < 0.7:
            rng.choice(proto.shape.dim).size = rng.choice(BIG)
        else:
            proto.shape.dim.add().size = rng.choice(BIG)
    else:
        proto.shape.unknown_rank = True


def _index(rng, data):
    items = sstable.parse(data)
    keys = sorted(items)
    key = rng.choice(keys)
    action = rng.random()
    if key == b"":
        header = tensor_bundle_pb2.BundleHeaderProto()
        header.ParseFromString(items[key])
        if rng.random() < 0.5:
            header.num_shards = rng.choice([0, 2, 1 << 16, (1 << 31) - 1])
        else:
            header.endianness = 1 - header.endianness
        items[key] = header.SerializeToString()
    elif action < 0.7:
        proto = tensor_bundle_pb2.BundleEntryProto()
        proto.ParseFromString(items[key])
        for _ in range(rng.randint(1, 3)):
            _entry(rng, proto)
        items[key] = proto.SerializeToString()
    elif action < 0.85:
        del items[key]
    else:
        items[rng.choice([b"\xff", key + b"/x", b"a" * 300])] = items[key]
    return sstable.build(items)


def mutate_case(rng, blob):
    files = unpack(blob)
    if INDEX in files and rng.random() < 0.6:
        try:
            files[INDEX] = _index(rng, files[INDEX])
            return pack(files)
        except Exception:  # noqa: BLE001 - an index an earlier mutation broke: mutate its bytes
            pass
    names = [n for n in files if n.startswith("variables/")]
    if names and rng.random() < 0.2:
        name = rng.choice(sorted(names))
        files[name] = files[name][:rng.randrange(len(files[name]) + 1)]
        return pack(files)
    return pack(mutate_one_file(rng, files, names))


def run_case(blob, workdir, rng):
    return saved_model_cases.run_case(blob, workdir, rng)
