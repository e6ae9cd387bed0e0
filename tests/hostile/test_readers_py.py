"""Hostile files for graphrun's readers other than binary GraphDefs: V2 checkpoints (the SSTable
index, its bundle entries, data shards) under a SavedModel, external weight sidecars and text
GraphDefs. Each input is built here by hand from a graphdef-written model; graphrun must answer
with one line naming what is wrong (exit 3 for an unusable model), graphrun-cc with one line too.
"""
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import graphdef as gd
from graphdef._proto import graph_pb2, meta_graph_pb2, tensor_bundle_pb2
from graphdef.wire import sstable
from graphdef.wire.external_weights import ATTR

GRAPHRUN = [sys.executable, "-c", "import sys; from graphdef.graphrun.cli import main; sys.exit(main(sys.argv[1:]))"]
INDEX = "variables/variables.index"
SHARD = "variables/variables.data-00000-of-00001"


def refusal(argv):
    """The one stderr line of a refused run; fails on anything else (a traceback, a catch-all)."""
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode in (2, 3, 4), (proc.returncode, proc.stderr[-2000:])
    assert proc.stderr.count("\n") == 1, proc.stderr[-2000:]
    for word in ("Traceback", "internal error", "cannot load the graph (", "unexpected "):
        assert word not in proc.stderr, proc.stderr
    return proc.returncode, proc.stderr.rstrip("\n")


def _copy_with(export, tmp_path, name, change):
    copy = tmp_path / "export"
    shutil.copytree(export, copy)
    target = copy / name
    target.write_bytes(change(target.read_bytes()))
    return copy


def _footer_handle_past_end(data):
    """The footer's index handle (offset, size) rewritten to point past the file."""
    footer = bytearray(data[-48:])
    far = sstable._handle(len(data) * 4, 1 << 20)
    footer[:len(far) * 2] = far + far
    return data[:-48] + bytes(footer)


def _flip_last_shard_byte(data):
    return data[:-1] + bytes([data[-1] ^ 0xFF])


def _entry_of_w(**fields):
    """The index rebuilt with w's BundleEntryProto changed: a lying offset, size or shard."""
    def change(data):
        items = sstable.parse(data)
        entry = tensor_bundle_pb2.BundleEntryProto()
        entry.ParseFromString(items[b"w"])
        for key, value in fields.items():
            if key == "dims":
                del entry.shape.dim[:]
                for d in value:
                    entry.shape.dim.add(size=d)
            else:
                setattr(entry, key, value)
        items[b"w"] = entry.SerializeToString()
        return sstable.build(items)
    return change


CHECKPOINTS = {
    "entry-offset-past-shard": (INDEX, _entry_of_w(offset=1 << 40)),
    "entry-offset-negative": (INDEX, _entry_of_w(offset=-24)),
    "entry-size-lies": (INDEX, _entry_of_w(size=(1 << 63) - 1)),
    "entry-shard-missing": (INDEX, _entry_of_w(shard_id=7)),
    "entry-dim-negative": (INDEX, _entry_of_w(dims=[-(1 << 63)])),
    "index-truncated": (INDEX, lambda d: d[: len(d) // 2]),
    "index-empty": (INDEX, lambda d: b""),
    "index-handle-past-end": (INDEX, _footer_handle_past_end),
    "index-garbage": (INDEX, lambda d: b"\xff" * len(d)),
    "shard-shorter": (SHARD, lambda d: d[:-4]),
    "shard-empty": (SHARD, lambda d: b""),
    "shard-crc-mismatch": (SHARD, _flip_last_shard_byte),
}


@pytest.mark.parametrize("case", sorted(CHECKPOINTS))
def test_a_lying_checkpoint_is_refused_in_one_line(runner, export, tmp_path, case):
    name, change = CHECKPOINTS[case]
    model = _copy_with(export, tmp_path, name, change)
    argv = ["run", str(model), "--random"]
    code, line = refusal(GRAPHRUN + argv)
    assert code == 3 and line.startswith("graphrun: ") and "variables" in line, line
    cc_code, cc_line = refusal([str(runner)] + argv)
    assert cc_code == 3 and cc_line.startswith("graphrun-cc: ") and "variables" in cc_line, cc_line


@pytest.fixture(scope="module")
def sidecar_model(tmp_path_factory):
    """model.pb with its 4 KB weight in model.weights beside it."""
    folder = tmp_path_factory.mktemp("sidecar")
    graph = gd.Graph()
    with graph.as_default():
        x = gd.placeholder(gd.float32, [1, 1024], name="x")
        gd.reduce_sum(x * gd.constant(np.linspace(0, 1, 1024, dtype=np.float32), name="w"), name="y")
    gd.io.write_graph(graph, str(folder), "model.pb", as_text=False, external_weights=True)
    return folder


def _sidecar_with(sidecar_model, tmp_path, name=None, numbers=None, weights=None):
    folder = tmp_path / "model"
    shutil.copytree(sidecar_model, folder)
    graph_def = graph_pb2.GraphDef()
    graph_def.ParseFromString((folder / "model.pb").read_bytes())
    node = next(n for n in graph_def.node if ATTR in n.attr)
    if name is not None:
        node.attr[ATTR].list.s[0] = name
    for k, value in (numbers or {}).items():
        node.attr[ATTR].list.i[k] = value
    (folder / "model.pb").write_bytes(graph_def.SerializeToString())
    if weights is not None:
        (folder / "model.weights").write_bytes(weights((folder / "model.weights").read_bytes()))
    return folder / "model.pb"


SIDECARS = {
    "offset-past-end": ({"numbers": {0: 1 << 40}}, "node 'w' (Const)"),
    "offset-negative": ({"numbers": {0: -64}}, "node 'w' (Const)"),
    "offset-overflowing": ({"numbers": {0: (1 << 63) - 64}}, "node 'w' (Const)"),
    "length-lies": ({"numbers": {1: 8}}, "node 'w' (Const)"),
    "length-huge": ({"numbers": {1: (1 << 62)}}, "node 'w' (Const)"),
    "path-dotdot": ({"name": b"../model.weights"}, "node 'w' (Const)"),
    "path-absolute": ({"name": b"/dev/zero"}, "node 'w' (Const)"),
    "path-missing": ({"name": b"other.weights"}, "node 'w' (Const)"),
    "file-truncated": ({"weights": lambda d: d[:100]}, "node 'w' (Const)"),
    "file-empty": ({"weights": lambda d: b""}, "node 'w' (Const)"),
    "header-garbage": ({"weights": lambda d: b"\xff" * 64 + d[64:]}, "node 'w' (Const)"),
}


@pytest.mark.parametrize("case", sorted(SIDECARS))
def test_a_lying_sidecar_is_refused_alike_in_one_line(runner, sidecar_model, tmp_path, case):
    change, words = SIDECARS[case]
    model = _sidecar_with(sidecar_model, tmp_path, **change)
    argv = ["run", str(model), "--random"]
    code, line = refusal(GRAPHRUN + argv)
    assert code == 3 and line.startswith(f"graphrun: {model}: {words}: "), line
    cc_code, cc_line = refusal([str(runner)] + argv)
    assert (cc_code, cc_line) == (3, "graphrun-cc: " + line[len("graphrun: "):])


NUL_NAME = "the weights file 'model.weights\\x00x' must be a plain file name in the model's directory"


def test_graphrun_names_a_sidecar_path_with_a_nul_escaped(sidecar_model, tmp_path):
    model = _sidecar_with(sidecar_model, tmp_path, name=b"model.weights\0x")
    line = refusal(GRAPHRUN + ["run", str(model), "--random"])
    assert line == (3, f"graphrun: {model}: node 'w' (Const): {NUL_NAME}")


def test_graphrun_cc_names_a_sidecar_path_with_a_nul_escaped(runner, sidecar_model, tmp_path):
    model = _sidecar_with(sidecar_model, tmp_path, name=b"model.weights\0x")
    line = refusal([str(runner), "run", str(model), "--random"])
    assert line == (3, f"graphrun-cc: {model}: node 'w' (Const): {NUL_NAME}")


PLACEHOLDER = 'node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }\n'


def _const(dtype, tensor):
    return (PLACEHOLDER + f'node {{ name: "c" op: "Const" attr {{ key: "dtype" value {{ type: {dtype} }} }} '
            f'attr {{ key: "value" value {{ tensor {{ dtype: {dtype} {tensor} }} }} }} }}')


BIG = 10_000_000
# a 10 MB string constant runs in graphrun now: tests/hostile/test_hostile_strings.py
TEXTS = {
    "unterminated-10MB-string": ('node { name: "x' + "a" * BIG, 3,
                                 f"not a text-format GraphDef (line 1 column {BIG + 16}: Unexpected end of string.)"),
    "integer-past-int64": (_const("DT_INT32", "tensor_shape {} int_val: 99999999999999999999999"), 3,
                           "not a text-format GraphDef (line 2 column 155: Integer out of range "
                           "(99999999999999999999999))"),
    # the escapes' words and places are protobuf C++'s (tests/hostile/test_escapes.py compares both runtimes)
    "truncated-hex-escape": ('node { name: "x\\x" op: "Placeholder" }', 3,
                             "not a text-format GraphDef (line 1 column 18: Expected hex digits for escape "
                             "sequence.)"),
    # \777 keeps its low 8 bits, 0xff: not UTF-8 in a string field
    "octal-escape-past-a-byte": ('node { name: "x\\777" op: "Placeholder" }', 3,
                                 "not a text-format GraphDef (line 1 column 14: a string is not valid UTF-8)"),
    "name-not-utf8": ('node { name: "\\xff\\xfe" op: "Placeholder" }', 3,
                      "not a text-format GraphDef (line 1 column 14: a string is not valid UTF-8)"),
    "dims-past-int64-bytes": (_const("DT_FLOAT", "tensor_shape { dim { size: 9223372036854775807 } dim { size: "
                                                 "9223372036854775807 } } float_val: 1"), 4,
                              "node 'c' (Const): attr 'value': tensor [9223372036854775807,9223372036854775807] "
                              "float32 would take more than 16.0 EiB, over the limit of"),
    "negative-dim": (_const("DT_FLOAT", "tensor_shape { dim { size: -5 } } float_val: 1"), 3,
                     "node 'c' (Const): attr 'value': shape [-5] has a negative dim; a constant needs every dim's "
                     "size"),
    "nested-3000-deep": ('node { name: "c" op: "Const" attr { key: "value" value { '
                         + 'list { func { name: "f" attr { key: "a" value { ' * 3000 + "} } } }" * 3000 + " } } }", 3,
                         "nesting deeper than 100 levels (at node 'c' attr 'value')"),
}


NOT_UTF8 = {"octal-escape-past-a-byte", "name-not-utf8"}


@pytest.mark.parametrize("case", sorted(TEXTS))
def test_a_hostile_text_graph_is_refused_in_one_short_line(runner, tmp_path, case):
    text, exit_code, words = TEXTS[case]
    model = tmp_path / "model.pbtxt"
    model.write_text(text)
    argv = ["run", str(model), "--random", "--shape", "x=1"]
    code, line = refusal(GRAPHRUN + argv)
    assert code == exit_code and line.startswith(f"graphrun: {model}: {words}") and len(line) < 400, line[:400]
    cc_code, cc_line = refusal([str(runner)] + argv)
    if case in NOT_UTF8:  # graphrun-cc's text reader keeps the bytes (as TensorFlow's does) and refuses later
        assert cc_code == exit_code and len(cc_line) < 400, cc_line[:400]
    else:
        assert (cc_code, cc_line) == (code, "graphrun-cc: " + line[len("graphrun: "):]), cc_line[:400]


@pytest.fixture(scope="module")
def meta_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("meta")
    graph = gd.Graph()
    with graph.as_default():
        x = gd.placeholder(gd.float32, [None, 3], name="x")
        gd.nn.relu(gd.matmul(x, gd.Variable(np.ones((3, 2), np.float32), name="w")), name="y")
        init = gd.global_variables_initializer()
        saver = gd.train.Saver()
    with gd.Session(graph=graph) as sess:
        sess.run(init)
        saver.save(sess, str(folder / "model"))
    return folder / "model.meta"


def _meta_with(meta_file, tmp_path, edit):
    meta = meta_graph_pb2.MetaGraphDef()
    meta.ParseFromString(meta_file.read_bytes())
    edit(meta)
    path = tmp_path / "edited.meta"
    path.write_bytes(meta.SerializeToString())
    return path


def _node(meta, name):
    return next(n for n in meta.graph_def.node if n.name == name)


def _names_const(meta):
    return _node(meta, "save/RestoreV2/tensor_names")


def _retype_w(meta):
    _node(meta, "w").op = "VarHandleOp"


def _restore_into_nothing(meta):
    _node(meta, "save/Assign").input[0] = "nosuch"


def _empty_key(meta):
    _names_const(meta).attr["value"].tensor.string_val[0] = b""


def _lying_names_shape(meta, sizes=(1 << 40,)):
    shape = _names_const(meta).attr["value"].tensor.tensor_shape
    del shape.dim[:]
    for size in sizes:
        shape.dim.add(size=size)


# Found by run_fuzz.py --surface meta: a TypeError, a KeyError, a ValueError and a MemoryError.
METAS = {
    "saver-into-a-non-variable": (_retype_w, "edited.meta: the saver restores 'w' into node 'w' (VarHandleOp), "
                                             "which is not a variable"),
    "saver-into-no-node": (_restore_into_nothing, "edited.meta: the saver restores 'w' into node 'nosuch', which "
                                                  "the graph does not have"),
    "saver-key-empty": (_empty_key, "edited.meta: Saver: '' cannot name a variable in a checkpoint"),
}


@pytest.mark.parametrize("case", sorted(METAS))
def test_a_lying_meta_file_is_refused_by_name(meta_file, tmp_path, case):
    edit, words = METAS[case]
    path = _meta_with(meta_file, tmp_path, edit)
    with gd.Graph().as_default(), pytest.raises(gd.errors.InvalidArgumentError) as caught:
        gd.train.import_meta_graph(str(path))
    assert str(caught.value) == f"{tmp_path}/{words}"


# 2^40 keys claimed are padded to no more than 2^20; a negative count (run_fuzz.py --surface meta
# found an OverflowError) is no keys at all
@pytest.mark.parametrize("sizes", [(1 << 40,), (-2, 1 << 62)], ids=["huge", "negative"])
def test_a_meta_file_whose_key_list_lies_about_its_shape_imports_without_the_lie(meta_file, tmp_path, sizes):
    path = _meta_with(meta_file, tmp_path, lambda meta: _lying_names_shape(meta, sizes))
    with gd.Graph().as_default():
        saver = gd.train.import_meta_graph(str(path))
    assert saver is not None


def test_a_meta_file_with_a_million_entry_collection_imports(meta_file, tmp_path):
    def edit(meta):
        meta.collection_def["junk"].node_list.value.extend(["nosuch:0"] * 1_000_000)
    path = _meta_with(meta_file, tmp_path, edit)
    with gd.Graph().as_default() as graph:
        gd.train.import_meta_graph(str(path))
        assert graph.get_operation_by_name("y").type == "Relu"


RUN_FUZZ = [sys.executable, str(Path(__file__).resolve().parents[2] / "fuzz" / "py" / "run_fuzz.py")]


def _fuzz_summary(surface, out):
    proc = subprocess.run(RUN_FUZZ + ["--surface", surface, "--runs", "60", "--seed", "5", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("  ") and " in " not in line]
    per_surface = [line for line in proc.stdout.splitlines() if line.startswith(f"  surface {surface}: 60 runs")]
    assert proc.returncode == 0 and len(per_surface) == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    return lines


@pytest.mark.slow
@pytest.mark.parametrize("surface", ["saved_model", "checkpoint", "meta", "sidecar", "pbtxt", "images"])
def test_each_reader_surface_runs_clean_and_replays_from_its_seed(surface, tmp_path):
    first = _fuzz_summary(surface, tmp_path / "a")
    assert first == _fuzz_summary(surface, tmp_path / "b")  # seeds remade in b: the same bytes, the same cases
