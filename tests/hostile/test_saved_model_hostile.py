"""SavedModel directories whose variables files are not files: both runtimes refuse promptly.

A FIFO in place of the variables index or of a data shard used to hang graphrun-cc in open();
each case is built here from a graphdef-written SavedModel copied and mutated in tmp_path.
"""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import graphdef as gd

SHARD = "variables.data-00000-of-00001"
INDEX = "variables.index"


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    path = tmp_path_factory.mktemp("seed") / "export"
    graph = gd.Graph()
    with graph.as_default():
        x = gd.placeholder(gd.float32, [None, 3], name="x")
        y = gd.nn.relu(gd.matmul(x, gd.Variable(np.ones((3, 2), np.float32), name="w")), name="y")
        init = gd.global_variables_initializer()
    with gd.Session(graph=graph) as sess:
        sess.run(init)
        gd.saved_model.simple_save(sess, path, {"x": x}, {"y": y})
    return path


def replaced(export, tmp_path, name, how):
    """A copy of `export` whose variables/`name` is a FIFO or a directory."""
    copy = tmp_path / "export"
    shutil.copytree(export, copy)
    target = copy / "variables" / name
    target.unlink()
    if how == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    return copy


def one_line_refusal(argv, prefix):
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert proc.returncode in (2, 3), (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout == ""
    assert proc.stderr.startswith(prefix) and proc.stderr.count("\n") == 1, proc.stderr[-2000:]
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    return proc.stderr


@pytest.mark.parametrize("how", ["fifo", "dir"])
@pytest.mark.parametrize("name", [INDEX, SHARD])
def test_graphrun_cc_refuses_a_variables_file_that_is_not_a_file(runner, export, tmp_path, name, how):
    model = replaced(export, tmp_path, name, how)
    line = one_line_refusal([str(runner), "run", str(model), "--random"], "graphrun-cc: ")
    assert "variables" in line


@pytest.mark.parametrize("how", ["fifo", "dir"])
@pytest.mark.parametrize("name", [INDEX, SHARD])
def test_graphrun_refuses_a_variables_file_that_is_not_a_file(export, tmp_path, name, how):
    model = replaced(export, tmp_path, name, how)
    code = "import sys; from graphdef.graphrun.cli import main; sys.exit(main(sys.argv[1:]))"
    line = one_line_refusal([sys.executable, "-c", code, "run", str(model), "--random"], "graphrun: ")
    assert "variables" in line


def _edited(export, tmp_path, edit):
    """A copy of `export` whose serving meta graph `edit` changed in place."""
    from graphdef._proto import meta_graph_pb2
    copy = tmp_path / "edited"
    shutil.copytree(export, copy)
    model = meta_graph_pb2.SavedModel()
    model.ParseFromString((copy / "saved_model.pb").read_bytes())
    edit(model.meta_graphs[0])
    (copy / "saved_model.pb").write_bytes(model.SerializeToString())
    return copy


def _drop_node(name):
    def edit(meta):
        meta.graph_def.node.remove(next(n for n in meta.graph_def.node if n.name == name))
    return edit


def _add_input(text):
    def edit(meta):
        next(n for n in meta.graph_def.node if n.name == "y").input.append(text)
    return edit


def _output_names(text):
    def edit(meta):
        meta.signature_def["serving_default"].outputs["y"].name = text
    return edit


# Found by fuzz/py/saved_model_cases.py: graphrun said "cannot load the graph (KeyError: 'w')".
DANGLING = [
    (_drop_node("w"), "node 'w/read' (Identity): input 'w' names no node in the graph"),
    (_add_input("^NoOp"), "node 'y' (Relu): input '^NoOp' names no node in the graph"),
    (_add_input("serving_default_x"), "node 'y' (Relu): input 'serving_default_x' names no node in the graph"),
    (_output_names("x:7"),
     "node 'y' (Identity): input 'x:7' asks for output 7 of node 'x' (Placeholder), which has 1 output"),
]
GRAPHRUN = [sys.executable, "-c", "import sys; from graphdef.graphrun.cli import main; sys.exit(main(sys.argv[1:]))"]


@pytest.mark.parametrize("edit, words", DANGLING,
                         ids=["dropped-variable", "control-input", "signature-style-name", "output-7"])
def test_both_runtimes_name_a_dangling_reference_alike(runner, export, tmp_path, edit, words):
    model = _edited(export, tmp_path, edit)
    for program, prefix in ((GRAPHRUN, "graphrun: "), ([str(runner)], "graphrun-cc: ")):
        proc = subprocess.run(program + ["run", str(model), "--random", "--shape", "x=1,3"], capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert (proc.returncode, proc.stderr) == (3, f"{prefix}{model}: {words}\n")


def _identity_loop_into_the_saver(meta):
    loop = meta.graph_def.node.add(name="loop", op="Identity", input=["loop"])
    loop.attr["T"].type = 1
    next(n for n in meta.graph_def.node if n.name == "save/Assign").input[1] = "loop"


def test_an_identity_loop_in_the_saver_does_not_hang_either_runtime(runner, export, tmp_path):
    """Found by run_fuzz.py --surface saved_model: following the restore through Identities
    looped for ever on an Identity whose input is itself."""
    model = _edited(export, tmp_path, _identity_loop_into_the_saver)
    for program in (GRAPHRUN, [str(runner)]):
        proc = subprocess.run(program + ["run", str(model), "--random", "--shape", "x=1,3"], capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0 and proc.stdout.startswith("y:0 float32 [1,2] = "), (proc.stdout, proc.stderr)
