"""A bad --feed or --feeds is refused by graphrun and graphrun-cc with the same one line and
the same exit code. Each class of bad input is made here (JSON text, .npy and .npz files written
byte by byte or with numpy) and the line each runtime must print is spelled out, so the runtimes are
held to the text and not only to each other."""
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import graphdef as gd
from graphdef.wire import serialize

GRAPHRUN = [sys.executable, "-c", "import sys; from graphdef.graphrun.cli import main; sys.exit(main(sys.argv[1:]))"]
PLACEHOLDERS = "the graph's placeholders: f (float32, [2]), u (float32, <unknown>), b (bool, []), i (int32, [?])"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The model (float32 [2], float32 of unknown shape, bool [], int32 [?]) and the feed files."""
    root = tmp_path_factory.mktemp("feeds")
    graph = gd.Graph()
    with graph.as_default():
        gd.identity(gd.placeholder(gd.float32, [2], name="f"), name="out_f")
        gd.identity(gd.placeholder(gd.float32, None, name="u"), name="out_u")
        gd.identity(gd.placeholder(gd.bool, [], name="b"), name="out_b")
        gd.identity(gd.placeholder(gd.int32, [None], name="i"), name="out_i")
    serialize.save(graph, root / "model.pb")
    (root / "junk.npy").write_bytes(b"this is not numpy at all")
    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
    (root / "call.npy").write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.replace(
        b"(2,)", b"eval('2')") + b"\0" * 8)
    np.save(root / "trunc.npy", np.zeros(39, np.float32))
    (root / "trunc.npy").write_bytes((root / "trunc.npy").read_bytes()[:-12])
    with open(root / "objects.npy", "wb") as f:
        f.write(b"\x93NUMPY\x01\x00")
        text = b"{'descr': '|O', 'fortran_order': False, 'shape': (2,), }"
        f.write(len(text).to_bytes(2, "little") + text + b"\0" * 16)
    np.save(root / "bools.npy", np.array([True, False]))
    np.savez(root / "good.npz", f=np.zeros(2, np.float32))
    np.savez(root / "shape.npz", f=np.zeros(3, np.float32))
    np.savez(root / "unknown.npz", nope=np.zeros(3, np.float32))
    with zipfile.ZipFile(root / "junk.npz", "w") as z:
        z.writestr("f.npy", b"not an npy member")
    with zipfile.ZipFile(root / "nested.npz", "w") as z:
        z.writestr("f.npy", (root / "good.npz").read_bytes())
    negative = b"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }"
    with zipfile.ZipFile(root / "negative.npz", "w") as z:
        z.writestr("f.npy", b"\x93NUMPY\x01\x00" + len(negative).to_bytes(2, "little") + negative + bytes(8))
    (root / "broken.npy").write_bytes(b"PK\x05\x06 a zip's end record and nothing else")
    stored = bytearray((root / "good.npz").read_bytes())  # np.savez stores members as they are
    stored[stored.index(b"\x93NUMPY") + 130] ^= 0xFF  # a byte of the data, not of the header
    (root / "crc.npz").write_bytes(bytes(stored))
    return root


def both_lines(runner, root, args):
    """(exit code, line) of each runtime, its name and the files' folder taken out; one line each."""
    lines = []
    for argv, program in ((GRAPHRUN, "graphrun"), ([str(runner)], "graphrun-cc")):
        proc = subprocess.run(argv + ["run", str(root / "model.pb"), *args], capture_output=True, text=True,
                              timeout=120, stdin=subprocess.DEVNULL, cwd=root)
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(f"{program}: "), proc.stderr[-2000:]
        lines.append((proc.returncode, proc.stderr[len(program) + 2:].rstrip("\n")))
    return lines


def nested(depth):
    return "[" * depth + "1" + "]" * depth


CASES = [
    # the placeholder named
    (["--feed", "nope=1"], f"cannot feed 'nope': the graph has no node 'nope'; {PLACEHOLDERS}"),
    (["--feed", "out_f=1"], f"cannot feed 'out_f': 'out_f' is a Identity node, not a placeholder; {PLACEHOLDERS}"),
    (["--feed", "f=[1,2]", "--feed", "f:0=[3,4]"], "--feed f:0: placeholder 'f' is fed twice"),
    # shape
    (["--feed", "f=[1]"], "--feed f: a value of shape [1] does not fit placeholder 'f' (float32), whose shape is [2]"),
    (["--feed", "i=[[1]]"],
     "--feed i: a value of shape [1,1] does not fit placeholder 'i' (int32), whose shape is [?]"),
    # kinds and ranges
    (["--feed", "b=1"], "--feed b: placeholder 'b' (bool) takes true/false, not numbers"),
    (["--feed", "f=[true,false]"], "--feed f: true/false cannot be fed to placeholder 'f' (float32)"),
    (["--feed", 'f="text"'], "--feed f: placeholder 'f' (float32) cannot be fed strings"),
    (["--feed", "i=[1,3000000000,-3000000000]"], "--feed i: 3000000000 is out of range for placeholder 'i' (int32)"),
    (["--feed", "i=[-3000000000,3000000000]"], "--feed i: -3000000000 is out of range for placeholder 'i' (int32)"),
    (["--feed", "i=[1,1180591620717411303424]"],
     "--feed i: 1180591620717411303424 is out of range for placeholder 'i' (int32)"),
    (["--feed", "i=[-9223372036854775809]"],
     "--feed i: -9223372036854775809 is out of range for placeholder 'i' (int32)"),
    (["--feed", "i=[2.5,1e30]"], "--feed i: 2.5 is not an integer, which placeholder 'i' (int32) needs"),
    (["--feed", "i=[1e30,2.5]"], "--feed i: 1e+30 is out of range for placeholder 'i' (int32)"),
    (["--feed", "f=[1e308,1]"], "--feed f: 1e+308 is out of range for placeholder 'f' (float32)"),
    (["--feed", "u=[1e400]"], "--feed u: a number is beyond the range of float64"),
    (["--feed", "u=[1,true]"], "--feed u: the array mixes true/false with numbers"),
    # JSON text
    (["--feed", "f=0x10"],
     "--feed f: cannot parse '0x10' as JSON; give a number, true/false, a nested array, or @file.npy"),
    (["--feed", "f=[1,"],
     "--feed f: cannot parse '[1,' as JSON; give a number, true/false, a nested array, or @file.npy"),
    (["--feed", "u=null"],
     "--feed u: 'null' is not a number, true/false, a string, or a rectangular nested array of one kind of them"),
    (["--feed", 'u=[1,"a"]'],
     "--feed u: '[1,\"a\"]' is not a number, true/false, a string, or a rectangular nested array of one kind "
     "of them"),
    (["--feed", "u={}"], '--feed u: a JSON object in a feed must be {"b64": "<base64>"} (bytes), got {}'),
    (["--feed", 'u={"\u00e9": [1, 2.50], "b": "\\u0001", "a": {"z": 1e5}}'],
     '--feed u: a JSON object in a feed must be {"b64": "<base64>"} (bytes), got '
     '{"a":{"z":100000.0},"b":"\\u0001","\u00e9":[1,2.5]}'),
    (["--feed", 'u=[{"b64":"AAAA"}]'], "--feed u: placeholder 'u' (float32) cannot be fed strings"),
    (["--feed", "u=[[1,2],[3]]"], "--feed u: the nested arrays are not rectangular"),
    (["--feed", "u=[1,[2]]"], "--feed u: the nested arrays are not rectangular"),
    (["--feed", "u=" + nested(64)], None),  # as deep as a tensor may be: fed
    (["--feed", "u=" + nested(65)], "--feed u: the arrays nest 65 deep, more than the 64 dims a tensor may have"),
    (["--feed", "u=" + nested(5000)],
     "--feed u: the arrays nest 5000 deep, more than the 64 dims a tensor may have"),
    (["--feed", "u=" + "[" * 3000], "--feed u: the arrays nest 3000 deep, more than the 64 dims a tensor may have"),
    # .npy files
    (["--feed", "f=@absent.npy"], "--feed f: no such file 'absent.npy'"),
    (["--feed", "f=@junk.npy"], "--feed f: 'junk.npy': not an .npy file"),
    (["--feed", "f=@call.npy"], "--feed f: 'call.npy': malformed .npy header"),
    (["--feed", "f=@trunc.npy"],
     "--feed f: 'trunc.npy': the header promises [39] float32 (156 bytes of data) but only 144 bytes follow it"),
    (["--feed", "f=@objects.npy"],
     "--feed f: 'objects.npy' holds Python objects (object); only numbers, bools and strings ('S' or 'U' arrays) "
     "can be fed, and nothing from a file is ever unpickled"),
    (["--feed", "f=@bools.npy"], "--feed f: true/false cannot be fed to placeholder 'f' (float32)"),
    (["--feed", "f=@good.npz"], "--feed f: 'good.npz' is an .npz archive; give a single .npy array"),
    # .npz archives
    (["--feeds", "shape.npz"],
     "--feeds shape.npz: 'f': a value of shape [3] does not fit placeholder 'f' (float32), whose shape is [2]"),
    (["--feeds", "unknown.npz"], f"--feeds unknown.npz: cannot feed 'nope': the graph has no node 'nope'; "
                                 f"{PLACEHOLDERS}"),
    (["--feeds", "junk.npz"], "--feeds junk.npz: 'f': not an .npy file"),
    (["--feeds", "nested.npz"], "--feeds nested.npz: 'f': not an .npy file"),
    (["--feeds", "negative.npz"], "--feeds negative.npz: 'f': malformed .npy header"),
    (["--feeds", "crc.npz"],
     "--feeds crc.npz: 'f': the member is damaged (its CRC-32 does not match); write the archive again"),
    (["--feed", "f=@broken.npy"], "--feed f: 'broken.npy': not an .npy file"),
    (["--feeds", "good.npz", "--feed", "f=[1,2]"], "--feeds good.npz: 'f': placeholder 'f' is fed twice"),
]


@pytest.mark.parametrize("args, line", CASES, ids=[" ".join(a)[:60] for a, _ in CASES])
def test_both_runtimes_say_the_same(cc_runner, files, args, line):
    if line is None:  # a value that must be accepted: both run it
        for argv in (GRAPHRUN, [str(cc_runner)]):
            proc = subprocess.run(argv + ["run", str(files / "model.pb"), "--fetch", "out_u", *args],
                                  capture_output=True, text=True, timeout=120, cwd=files)
            assert proc.returncode == 0 and proc.stdout.startswith("out_u:0 float32 [1,1,1"), proc.stderr[-500:]
        return
    (py_code, py_line), (cc_code, cc_line) = both_lines(cc_runner, files, args)
    assert py_line == cc_line == line
    assert py_code == cc_code == 2


def test_a_dtype_neither_holds_is_named_alike(cc_runner, tmp_path):
    """'complex64 tensors, which graphdef cannot hold' in both (graphrun-cc once said its own name)."""
    graph = gd.Graph()
    with graph.as_default():
        gd.identity(gd.placeholder(gd.float32, [2], name="f"), name="out_f")
    graph_def = graph.as_graph_def()
    node = graph_def.node.add(name="z", op="Placeholder")
    node.attr["dtype"].type = 8  # DT_COMPLEX64
    graph_def.node.add(name="out_z", op="Identity", input=["z"]).attr["T"].type = 8
    (tmp_path / "model.pb").write_bytes(graph_def.SerializeToString())
    (py_code, py_line), (cc_code, cc_line) = both_lines(cc_runner, tmp_path, ["--random"])
    line = f"{tmp_path / 'model.pb'}: complex64 tensors, which graphdef cannot hold: 'z' (Placeholder) and 1 more"
    assert py_line == cc_line == line
    assert py_code == cc_code == 3


def test_a_file_over_the_tensor_limit_is_a_run_failure_in_both(cc_runner, files, monkeypatch):
    """The header's shape is checked against GRAPHDEF_MAX_TENSOR_BYTES before anything is read: exit 4."""
    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000), }"
    header += b" " * (63 - len(header) % 64) + b"\n"
    data = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + b"\0" * 16
    (files / "huge.npy").write_bytes(data)
    with zipfile.ZipFile(files / "huge.npz", "w") as z:
        z.writestr("f.npy", data)
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", str(1 << 28))
    tail = "array [100000,100000] float32 would take 37.3 GiB, over the limit of 256.0 MiB (set " \
           "GRAPHDEF_MAX_TENSOR_BYTES to change it)"
    for args, line in ((["--feed", "f=@huge.npy"], f"--feed f: 'huge.npy': {tail}"),
                       (["--feeds", "huge.npz"], f"--feeds huge.npz: 'f': {tail}")):
        (py_code, py_line), (cc_code, cc_line) = both_lines(cc_runner, files, args)
        assert py_line == cc_line == line
        assert py_code == cc_code == 4


def test_a_missing_dtype_is_named_before_a_bad_attr_behind_it(cc_runner, tmp_path):
    """A node reading from a node neither runtime can hold is never run, so its bad attrs wait: both
    name what the runtime lacks (the dtype) first. A bad attr on a node that could run is named."""
    graph_def = gd.Graph().as_graph_def()
    z = graph_def.node.add(name="z", op="Placeholder")
    z.attr["dtype"].type = 8  # DT_COMPLEX64
    pool = graph_def.node.add(name="mp", op="MaxPool", input=["z"])  # no 'padding' attr
    pool.attr["T"].type = 1
    for key in ("ksize", "strides"):
        pool.attr[key].list.i.extend([1, 2, 2, 1])
    (tmp_path / "model.pb").write_bytes(graph_def.SerializeToString())
    (py_code, py_line), (cc_code, cc_line) = both_lines(cc_runner, tmp_path, ["--random"])
    assert py_line == cc_line == f"{tmp_path / 'model.pb'}: complex64 tensors, which graphdef cannot hold: 'z' " \
                                 "(Placeholder)"
    assert py_code == cc_code == 3
    pool.input[0] = "x"
    x = graph_def.node.add(name="x", op="Placeholder")
    x.attr["dtype"].type = 1
    (tmp_path / "model.pb").write_bytes(graph_def.SerializeToString())
    (py_code, py_line), (cc_code, cc_line) = both_lines(cc_runner, tmp_path, ["--random"])
    assert py_line == cc_line == f"{tmp_path / 'model.pb'}: node 'mp' (MaxPool): missing attr 'padding'"
    assert py_code == cc_code == 3


@pytest.mark.parametrize("fetch, line", [
    ("nope", "cannot fetch 'nope': the graph has no node 'nope'"),
    ("out_f:3", "cannot fetch 'out_f:3': node 'out_f' (Identity) has only output 0"),
])
def test_a_bad_fetch_is_named_alike(cc_runner, files, fetch, line):
    (py_code, py_line), (cc_code, cc_line) = both_lines(cc_runner, files, ["--feed", "f=[1,2]", "--fetch", fetch])
    assert py_line == cc_line and py_line.startswith(line), (py_line, cc_line)
    assert py_code == cc_code == 2
