"""A structure-aware mutator for SavedModel directories, run through graphrun and graphrun-cc.

Seeds are TF1 SavedModels written by TensorFlow (when it is importable) and by graphdef; each
case copies one, mutates the parsed SavedModel proto (signature tensor names, node inputs and
control inputs, function names) or the variables files (index and shard bytes, a FIFO or a
directory in their place), then runs `graphrun inspect` and `graphrun run --random` in-process
and graphrun-cc in a subprocess with a timeout.

Outcomes: "ok" or "clean" (one stderr line of graphdef's own) are fine; "traceback" (graphrun's
"cannot load the graph (X...)"/"unexpected X" catch-alls, a Python exception, several lines),
"internal" (graphrun-cc's internal error), "crash" (a signal) and "hang" are findings.

    python fuzz/py/saved_model_cases.py --runs 2000 --seed 1

As run_fuzz.py's "saved_model" surface (seeds, mutate, run below) a case is the export's files
packed into bytes (file_cases), mutated in its proto or its bytes, and run in-process only.
"""

import argparse
import collections
import contextlib
import io
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

import graphdef as gd  # noqa: E402
import graphdef.graphrun.cli as cli  # noqa: E402
from graphdef._proto import meta_graph_pb2  # noqa: E402

CC = os.path.join(ROOT, "build", "graphrun-cc")
TIMEOUT = 10
FINDINGS = ("traceback", "internal", "crash", "hang")
NAMES = ["^NoOp", "w/read", "save/RestoreV2", "serving_default_x", "x:7", "", ":", "^", "y:-1",
         "nosuch", "x:0:0", "\x00", "a" * 300, "dense/w/Read/ReadVariableOp", "^save/Const"]


def tensorflow_seed(path, use_resource):
    import tensorflow
    tf1 = tensorflow.compat.v1
    with tf1.Graph().as_default(), tf1.Session() as sess:
        x = tf1.placeholder(tensorflow.float32, [None, 3], name="x")
        w = tf1.Variable(np.ones((3, 2), np.float32), name="dense/w", use_resource=use_resource)
        b = tf1.Variable(np.zeros(2, np.float32), name="dense/b", use_resource=use_resource)
        y = tf1.nn.relu(tf1.matmul(x, w) + b, name="y")
        sess.run(tf1.global_variables_initializer())
        tf1.saved_model.simple_save(sess, path, {"x": x}, {"y": y})


def graphdef_seed(path):
    graph = gd.Graph()
    with graph.as_default():
        x = gd.placeholder(gd.float32, [None, 3], name="x")
        y = gd.nn.relu(gd.matmul(x, gd.Variable(np.ones((3, 2), np.float32), name="w"))
                       + gd.Variable(np.zeros(2, np.float32), name="b"), name="y")
        init = gd.global_variables_initializer()
    with gd.Session(graph=graph) as sess:
        sess.run(init)
        gd.saved_model.simple_save(sess, path, {"x": x}, {"y": y})


def make_seeds(root):
    seeds = []
    try:
        for use_resource in (False, True):
            path = os.path.join(root, f"tf_{int(use_resource)}")
            tensorflow_seed(path, use_resource)
            seeds.append(path)
    except ImportError:
        pass
    path = os.path.join(root, "gd")
    graphdef_seed(path)
    seeds.append(path)
    return seeds


def _mutate_proto(rng, model):
    mg = rng.choice(model.meta_graphs)
    nodes = list(mg.graph_def.node)
    kind = rng.randrange(7)
    if kind == 0 and mg.signature_def:
        sig = mg.signature_def[rng.choice(list(mg.signature_def))]
        infos = list(sig.inputs.values()) + list(sig.outputs.values())
        if infos:
            rng.choice(infos).name = rng.choice(NAMES + [n.name for n in nodes])
    elif kind == 1 and nodes:
        node = rng.choice(nodes)
        if node.input and rng.random() < 0.5:
            node.input[rng.randrange(len(node.input))] = rng.choice(NAMES)
        else:
            node.input.append(rng.choice(NAMES))
    elif kind == 2 and nodes:
        victim = rng.choice(nodes)
        mg.graph_def.node.remove(victim)
    elif kind == 3 and nodes:
        rng.choice(nodes).name = rng.choice(NAMES + [n.name for n in nodes])
    elif kind == 4:
        mg.saver_def.restore_op_name = rng.choice(NAMES)
        mg.saver_def.filename_tensor_name = rng.choice(NAMES)
    elif kind == 5 and nodes:
        rng.choice(nodes).op = rng.choice(["NoOp", "RestoreV2", "VarHandleOp", "Placeholder", "Nope", ""])
    elif kind == 6 and mg.signature_def:
        key = rng.choice(list(mg.signature_def))
        sig = mg.signature_def[key]
        if rng.random() < 0.5:
            sig.method_name = rng.choice(["", "x"])
        for m in (sig.inputs, sig.outputs):
            if m and rng.random() < 0.5:
                del m[rng.choice(list(m))]


def _mutate_bytes(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(3)
        if op == 0 and data:
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif op == 1:
            del data[rng.randrange(len(data) + 1):]
        else:
            at = rng.randrange(len(data) + 1)
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    return bytes(data)


def mutate(rng, export):
    """Mutates the SavedModel directory `export` in place; returns a short label."""
    pb = os.path.join(export, "saved_model.pb")
    var = os.path.join(export, "variables")
    files = sorted(os.listdir(var)) if os.path.isdir(var) else []
    choice = rng.random()
    if choice < 0.6:
        model = meta_graph_pb2.SavedModel()
        with open(pb, "rb") as f:
            model.ParseFromString(f.read())
        for _ in range(rng.randint(1, 3)):
            _mutate_proto(rng, model)
        with open(pb, "wb") as f:
            f.write(model.SerializeToString())
        return "proto"
    if choice < 0.9 and files:
        name = os.path.join(var, rng.choice(files))
        with open(name, "rb") as f:
            data = f.read()
        with open(name, "wb") as f:
            f.write(_mutate_bytes(rng, data))
        return "bytes:" + os.path.basename(name)
    if files:
        name = os.path.join(var, rng.choice(files))
        os.remove(name)
        how = rng.choice(["fifo", "dir", "missing"])
        if how == "fifo":
            os.mkfifo(name)
        elif how == "dir":
            os.mkdir(name)
        return f"{how}:{os.path.basename(name)}"
    return "none"


# -- run_fuzz.py's "saved_model" surface ----------------------------------------------------

def seeds(cache):
    from file_cases import cached_seeds, pack, read_tree
    return cached_seeds(cache, lambda folder: [pack(read_tree(p)) for p in make_seeds(folder)])


def mutate_case(rng, blob):
    """A packed export with its saved_model.pb's proto (mostly) or a file's bytes mutated."""
    from file_cases import mutate_one_file, pack, unpack
    files = unpack(blob)
    if "saved_model.pb" in files and rng.random() < 0.75:
        model = meta_graph_pb2.SavedModel()
        try:
            model.ParseFromString(files["saved_model.pb"])
        except Exception:  # noqa: BLE001 - bytes an earlier mutation broke: mutate them further
            return pack(mutate_one_file(rng, files))
        if model.meta_graphs:
            for _ in range(rng.randint(1, 3)):
                _mutate_proto(rng, model)
        files["saved_model.pb"] = model.SerializeToString(deterministic=True)
        return pack(files)
    return pack(mutate_one_file(rng, files))


def run_case(blob, workdir, rng):
    from execute import run_graphrun
    from file_cases import unpack, write_tree
    folder = write_tree(workdir, unpack(blob))
    if rng.random() < 0.2:
        return run_graphrun(["inspect", folder])
    return run_graphrun(["run", folder, "--random", "--shape", rng.choice(["x=1,3", "x=2,3", "x=0,3"])])


def _classify_lines(code, err):
    lines = [line for line in err.splitlines() if line.strip()]
    text = " ".join(lines)[:300]
    if code == 0:
        return "ok", ""
    if "Traceback" in err or "cannot load the graph (" in err or "unexpected " in err or len(lines) > 1:
        return "traceback", text
    if "internal error" in err:
        return "internal", text
    return "clean", text


def run_py(args):
    err = io.StringIO()
    result = {}

    def target():
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                result["code"] = cli.main(args)
        except SystemExit as e:
            result["code"] = e.code if isinstance(e.code, int) else 2
        except BaseException as e:  # noqa: BLE001 - any escape is a finding
            result["exc"] = f"{type(e).__name__}: {e}"

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(TIMEOUT)
    if thread.is_alive():
        return "hang", "graphrun over the time limit"
    if "exc" in result:
        return "traceback", result["exc"][:300]
    return _classify_lines(result.get("code", 0), err.getvalue())


def run_cc(args):
    if not os.path.exists(CC):
        return "ok", ""
    try:
        proc = subprocess.run([CC] + args, capture_output=True, text=True, timeout=TIMEOUT,
                              stdin=subprocess.DEVNULL, errors="replace")
    except subprocess.TimeoutExpired:
        return "hang", "graphrun-cc over the time limit"
    if proc.returncode < 0:
        return "crash", f"signal {-proc.returncode}: {proc.stderr.strip()[-200:]}"
    return _classify_lines(proc.returncode, proc.stderr)


def one_case(rng, seeds, work):
    export = os.path.join(work, "case")
    if os.path.exists(export):
        shutil.rmtree(export)
    shutil.copytree(rng.choice(seeds), export)
    label = mutate(rng, export)
    outcomes = []
    for runtime, runner in (("py", run_py), ("cc", run_cc)):
        for args in (["inspect", export], ["run", export, "--random"]):
            if runtime == "cc" and args[0] == "inspect":
                args = ["inspect", export]
            outcomes.append((runtime, args[0], label) + runner(args))
    return outcomes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=0, help="stop after this long (0: no limit)")
    opts = parser.parse_args(argv)
    import time
    start = time.monotonic()
    rng = random.Random(opts.seed)
    counts = collections.Counter()
    distinct = {}
    with tempfile.TemporaryDirectory() as work:
        seeds = make_seeds(os.path.join(work, "seeds"))
        for i in range(opts.runs):
            if opts.seconds and time.monotonic() - start > opts.seconds:
                break
            for runtime, command, label, cls, detail in one_case(rng, seeds, work):
                counts[cls] += 1
                if cls in FINDINGS:
                    key = (runtime, cls, detail.split(":")[0] if cls != "traceback" else detail[:60])
                    distinct.setdefault(key, (i, command, label, detail))
    out = sys.__stdout__  # a hung in-process run leaves sys.stdout redirected
    print("outcomes:", dict(counts), file=out)
    for (runtime, cls, _), (i, command, label, detail) in sorted(distinct.items()):
        print(f"{cls:9} {runtime} case {i} {command} [{label}] {detail[:200]}", file=out)
    return 1 if distinct else 0


if __name__ == "__main__":
    sys.exit(main())
