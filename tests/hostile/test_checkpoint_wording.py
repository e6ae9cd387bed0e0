"""A damaged V2 checkpoint under a SavedModel is refused by graphrun and graphrun-cc with the same
line: the index (sorted string table), its BundleEntryProtos and the data shard, each lie built
here by hand from a graphdef-written export. Every expected line is spelled out, so the two
runtimes are checked against the text and not only against each other."""
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from graphdef._proto import tensor_bundle_pb2
from graphdef.wire import sstable
from tests.hostile.test_cc_invalid_models import unpack_sections

GRAPHRUN = [sys.executable, "-c", "import sys; from graphdef.graphrun.cli import main; sys.exit(main(sys.argv[1:]))"]
INDEX = "variables/variables.index"
SHARD = "variables/variables.data-00000-of-00001"


def both_lines(runner, model, env=None):
    """(exit code, line) of each runtime refusing `model`, the program's name and the model's
    directory taken out; fails on anything but one line."""
    lines = []
    for argv, program in ((GRAPHRUN, "graphrun"), ([str(runner)], "graphrun-cc")):
        proc = subprocess.run(argv + ["run", str(model), "--random"], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(f"{program}: "), proc.stderr[-2000:]
        lines.append((proc.returncode, proc.stderr[len(program) + 2:].rstrip("\n").replace(str(model), "M")))
    return lines


def _entries(export):
    return sstable.parse((export / INDEX).read_bytes())


def _with_entry(dims=None, unknown_rank=False, **fields):
    """The index rebuilt with w's BundleEntryProto changed."""
    def change(items):
        entry = tensor_bundle_pb2.BundleEntryProto()
        entry.ParseFromString(items[b"w"])
        if dims is not None:
            del entry.shape.dim[:]
            for d in dims:
                entry.shape.dim.add(size=d)
        entry.shape.unknown_rank = unknown_rank
        if fields.pop("sliced", False):
            entry.slices.add().extent.add(start=0, length=1)
        for key, value in fields.items():
            setattr(entry, key, value)
        items[b"w"] = entry.SerializeToString()
        return items
    return change


def _with_header(**fields):
    def change(items):
        header = tensor_bundle_pb2.BundleHeaderProto()
        header.ParseFromString(items[b""])
        for key, value in fields.items():
            setattr(header, key, value)
        items[b""] = header.SerializeToString()
        return items
    return change


def _with_item(key, value):
    def change(items):
        items[key] = value
        return items
    return change


def _one_block(items, block_kind=0, restarts=None, last=None):
    """A table of one data block written by hand (no shared key prefixes), so its trailer's
    compression byte and restart count can lie."""
    body = bytearray()
    for key, value in sorted(items.items()):
        body += bytes([0, len(key), len(value)]) + key + value
    count = 1 if restarts is None else restarts
    body += struct.pack("<I", 0) * min(count, 1) + struct.pack("<I", count)
    out = bytearray()

    def put(block, kind=0):
        offset = len(out)
        out.extend(block + bytes([kind]) + struct.pack("<I", sstable.masked_crc32c(block + bytes([kind]))))
        return sstable._handle(offset, len(block))

    data = put(bytes(body), block_kind)
    meta = put(struct.pack("<II", 0, 1))
    last = max(items) if last is None else last
    index = put(bytes([0, len(last), len(data)]) + last + data + struct.pack("<II", 0, 1))
    return bytes(out) + (meta + index).ljust(40, b"\0") + struct.pack("<Q", sstable.MAGIC)


def _short_items(items):
    """Values of one byte at most, so _one_block's one-byte lengths hold them."""
    return {k: v for k, v in items.items() if len(k) < 128 and len(v) < 128}


TABLES = {
    "entry-not-a-proto": (_with_item(b"w", b"\xff\xff\xff"), 3,
                          "M/variables/variables.index: entry 'w' is not a BundleEntryProto"),
    "entry-dim-negative": (_with_entry(dims=[3, -7]), 3,
                           "M/variables/variables.index: entry 'w': negative dimension in shape [3, -7]"),
    "entry-dim-unknown": (_with_entry(dims=[3, -1]), 3,
                          "M/variables/variables.index: entry 'w': shape [3, -1] is not fully known"),
    "entry-rank-unknown": (_with_entry(dims=[], unknown_rank=True), 3,
                           "M/variables/variables.index: entry 'w': shape <unknown> is not fully known"),
    "entry-offset-negative": (_with_entry(offset=-24), 3,
                              "M/variables/variables.index: entry 'w': offset -24 is negative; the index is damaged"),
    "entry-size-lies": (_with_entry(size=(1 << 63) - 1), 3,
                        "M/variables/variables.index: entry 'w': 9223372036854775807 bytes at offset 0, but float32 "
                        "[3, 2] needs 24"),
    # the product needs more than 64 bits; both runtimes give it exactly
    "entry-size-for-huge-dims": (_with_entry(dims=[1 << 62, 1 << 62]), 3,
                                 "M/variables/variables.index: entry 'w': 24 bytes at offset 0, but float32 "
                                 "[4611686018427387904, 4611686018427387904] needs "
                                 f"{(1 << 62) * (1 << 62) * 4}"),
    "entry-shard-missing": (_with_entry(shard_id=7), 3, "M/variables/variables.index: entry 'w' is in shard 7 of 1"),
    "entry-shard-negative": (_with_entry(shard_id=-1), 3,
                             "M/variables/variables.index: entry 'w' is in shard -1 of 1"),
    "entry-dtype-unknown": (_with_entry(dtype=99), 3,
                            "M/variables/variables.data-00000-of-00001: tensor 'w': dtype enum 99 (graphdef reads "
                            "numeric and bool tensors)"),
    # variant is a dtype graphdef knows (TensorList), yet never raw bytes in a checkpoint
    "entry-dtype-variant": (_with_entry(dtype=21, offset=-(1 << 63)), 3,
                            "M/variables/variables.data-00000-of-00001: tensor 'w': dtype enum 21 (graphdef reads "
                            "numeric and bool tensors)"),
    "entry-sliced": (_with_entry(sliced=True), 3,
                     "M/variables/variables.data-00000-of-00001: tensor 'w': a sliced (partitioned) variable, which "
                     "graphdef does not read"),
    "entry-offset-past-shard": (_with_entry(offset=1 << 40), 3,
                                "M/variables/variables.data-00000-of-00001: tensor 'w': bytes "
                                "1099511627776..1099511627800 lie past the file's end (24 bytes)"),
    "header-big-endian": (_with_header(endianness=tensor_bundle_pb2.BundleHeaderProto.BIG), 3,
                          "M/variables/variables.index: a big-endian checkpoint, which graphdef does not read"),
    "header-no-shards": (_with_header(num_shards=0), 3, "M/variables/variables.index: 0 shards"),
    "header-not-a-proto": (_with_item(b"", b"\xff\xff"), 3, "M/variables/variables.index: unreadable bundle header"),
    # a key that is not UTF-8 is shown byte by byte, as graphrun-cc shows any such text
    "entry-key-not-utf8": (lambda items: {**items, b"w\xff": _with_entry(shard_id=7)(dict(items))[b"w"]}, 3,
                           "M/variables/variables.index: entry 'w\\xff' is in shard 7 of 1"),
    "key-missing": (lambda items: {k: v for k, v in items.items() if k != b"w"}, 3,
                    "M/variables/variables: the checkpoint lacks w"),
}


def _table_case(export, tmp_path, change):
    copy = tmp_path / "export"
    shutil.copytree(export, copy)
    (copy / INDEX).write_bytes(sstable.build(change(_entries(copy))))
    return copy


@pytest.mark.parametrize("case", sorted(TABLES))
def test_a_lying_index_entry_gets_one_line_in_both_runtimes(runner, export, tmp_path, case):
    change, code, line = TABLES[case]
    model = _table_case(export, tmp_path, change)
    assert both_lines(runner, model) == [(code, line)] * 2


def _raw_index_case(export, tmp_path, data):
    copy = tmp_path / "export"
    shutil.copytree(export, copy)
    (copy / INDEX).write_bytes(data)
    return copy


def test_a_compressed_block_is_named_with_its_type(runner, export, tmp_path):
    model = _raw_index_case(export, tmp_path, _one_block(_short_items(_entries(export)), block_kind=1))
    line = ("M/variables/variables.index data: block at 0 is compressed (type 1); only uncompressed tables are "
            "read (TensorFlow writes its checkpoints uncompressed)")
    assert both_lines(runner, model) == [(3, line)] * 2


def test_a_block_claiming_no_restarts_is_refused(runner, export, tmp_path):
    model = _raw_index_case(export, tmp_path, _one_block(_short_items(_entries(export)), restarts=0))
    assert both_lines(runner, model) == [(3, "M/variables/variables.index data: bad restart count 0")] * 2


def test_a_table_shorter_than_its_footer_gives_its_size(runner, export, tmp_path):
    model = _raw_index_case(export, tmp_path, b"\0" * 47)
    line = "M/variables/variables.index: 47 bytes is too short for a table footer"
    assert both_lines(runner, model) == [(3, line)] * 2


def test_keys_out_of_order_are_named(runner, export, tmp_path):
    # the index block's last key says every key of its block is <= "a"
    model = _raw_index_case(export, tmp_path, _one_block(_short_items(_entries(export)), last=b"a"))
    assert both_lines(runner, model) == [(3, "M/variables/variables.index: key 'w' is out of order")] * 2


SHARDS = {
    "shorter": (lambda path: path.write_bytes(path.read_bytes()[:-4]),
                "M/variables/variables.data-00000-of-00001: tensor 'w': bytes 0..24 lie past the file's end "
                "(20 bytes)"),
    "missing": (lambda path: path.unlink(), "M/variables/variables.data-00000-of-00001: No such file or directory"),
    "a-directory": (lambda path: (path.unlink(), path.mkdir()),
                    "M/variables/variables.data-00000-of-00001: not a regular file; put the file saved with the "
                    "model there"),
    "a-fifo": (lambda path: (path.unlink(), os.mkfifo(path)),
               "M/variables/variables.data-00000-of-00001: not a regular file; put the file saved with the model "
               "there"),
    # the index itself: a FIFO would block a reader for ever
    "index-a-fifo": (lambda path: ((path.parent / "variables.index").unlink(),
                                   os.mkfifo(path.parent / "variables.index")),
                     "M/variables/variables.index: not a regular file; put the file saved with the model there"),
    "index-a-directory": (lambda path: ((path.parent / "variables.index").unlink(),
                                        (path.parent / "variables.index").mkdir()),
                          "M/variables/variables.index: not a regular file; put the file saved with the model there"),
    "index-missing": (lambda path: (path.parent / "variables.index").unlink(),
                      "M: the SavedModel's variables are missing (M/variables/variables.index is not there); copy its "
                      "variables/ directory next to saved_model.pb"),
}


@pytest.mark.parametrize("case", sorted(SHARDS))
def test_a_damaged_shard_gets_one_line_in_both_runtimes(runner, export, tmp_path, case):
    change, line = SHARDS[case]
    copy = tmp_path / "export"
    shutil.copytree(export, copy)
    change(copy / SHARD)
    assert both_lines(runner, copy) == [(3, line)] * 2


def test_a_tensor_over_the_size_limit_is_refused_alike(runner, export, tmp_path):
    # exit 4, as for any tensor over the limit; named after the model first, as a Const would be
    assert both_lines(runner, export, env={"GRAPHDEF_MAX_TENSOR_BYTES": "16"}) == [
        (4, "M: M/variables/variables.data-00000-of-00001: tensor 'w': value [3,2] float32 would take 24 B, over "
            "the limit of 16 B (set GRAPHDEF_MAX_TENSOR_BYTES to change it)")] * 2


# -- TF2: the object graph, a string tensor read by its own rules --

OBJECT_GRAPH = b"_CHECKPOINTABLE_OBJECT_GRAPH"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tf2_export(tmp_path_factory):
    """fuzz/seeds' TF2 module (saved by TensorFlow), unpacked into a SavedModel directory."""
    return unpack_sections((REPO / "fuzz" / "seeds" / "tf2_module.savedmodel").read_bytes(),
                           tmp_path_factory.mktemp("tf2") / "export")


def _object_graph_entry(**fields):
    def change(items):
        entry = tensor_bundle_pb2.BundleEntryProto()
        entry.ParseFromString(items[OBJECT_GRAPH])
        if "dims" in fields:
            del entry.shape.dim[:]
            for d in fields.pop("dims"):
                entry.shape.dim.add(size=d)
        for key, value in fields.items():
            setattr(entry, key, value)
        items[OBJECT_GRAPH] = entry.SerializeToString()
        return items
    return change


def _without_object_graph(items):
    del items[OBJECT_GRAPH]
    return items


DATA = "M/variables/variables.data-00000-of-00001: tensor '_CHECKPOINTABLE_OBJECT_GRAPH'"
OBJECT_GRAPHS = {
    "missing": (_without_object_graph, 3,
                "M/variables/variables: the checkpoint has no object graph (_CHECKPOINTABLE_OBJECT_GRAPH), so its "
                "variables cannot be matched to the SavedModel's; was it written by tf.saved_model.save?"),
    "count-lies": (_object_graph_entry(dims=[1000]), 3, f"{DATA}: 1000 strings cannot fit in 220 bytes"),
    "checksum": (_object_graph_entry(crc32c=1), 3, f"{DATA}: the bytes fail their checksum (the file is damaged)"),
    "size-short": (_object_graph_entry(size=3), 3, f"{DATA}: the string lengths do not match the 3 bytes"),
    "shape-unknown": (_object_graph_entry(dims=[-1]), 3, f"{DATA}: not a string tensor of known shape"),
    "a-float": (_object_graph_entry(dtype=1), 3, "M/variables/variables.index: entry '_CHECKPOINTABLE_OBJECT_GRAPH': "
                                                 "220 bytes at offset 20, but float32 [] needs 4"),
    "size-huge": (_object_graph_entry(size=1 << 40), 4,
                  f"M: {DATA}: value [1099511627776] uint8 would take 1.0 TiB, over the limit of 1.0 GiB (set "
                  "GRAPHDEF_MAX_TENSOR_BYTES to change it)"),
}


@pytest.mark.parametrize("case", sorted(OBJECT_GRAPHS))
def test_a_lying_object_graph_gets_one_line_in_both_runtimes(runner, tf2_export, tmp_path, case):
    change, code, line = OBJECT_GRAPHS[case]
    model = _table_case(tf2_export, tmp_path, change)
    assert both_lines(runner, model, env={"GRAPHDEF_MAX_TENSOR_BYTES": str(1 << 30)}) == [(code, line)] * 2
