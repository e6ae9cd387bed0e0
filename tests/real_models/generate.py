"""Real TensorFlow/Keras models with seeded random weights, frozen the standard way; run by every runtime.

    .venv/bin/python -m tests.real_models.generate              # rewrite the committed models
    .venv/bin/python -m tests.real_models.generate lstm unet    # only these
    .venv/bin/python -m tests.real_models.generate --out build/real_models efficientnet_b0

Each model is what users really export: keras.applications networks at small sizes, Keras 3
and tf_keras recurrent layers, a Transformer encoder block, a U-Net, a detection
post-processing graph, and TF1 graphs (v1 control flow, a training flag, FusedBatchNorm V1).
TF2/Keras models are frozen with `convert_variables_to_constants_v2` (which lowers functional
control flow to TF1's Switch/Merge/Enter/Exit, as it does by default); TF1 graphs with
`tf.compat.v1.graph_util.convert_variables_to_constants`. TensorFlow's outputs are recorded
on seeded feeds, from the committed bytes read back into a fresh graph.

Tolerance rule (written per output into case.json). A deep float32 network computed in
another summation order differs from TensorFlow by about the error TensorFlow itself makes,
so that error is measured: the frozen graph is rewritten to float64 (every float32 attr,
placeholder and constant) and run by TensorFlow on the same feeds, giving a reference
`ref64` that is exact to float32's eyes. With `err32 = max|tf32 - ref64|` (TensorFlow's own
float32 error on that output), another runtime passes when every element satisfies

    |ours - tf32| <= atol,  atol = 8 * err32 + 16 * eps32 * max|ref64|

(`ours` within a few times TensorFlow's own error of the exact answer, plus a floor for
outputs TensorFlow happens to get nearly exact). Where TensorFlow has no float64 kernel for
some op of the graph, atol = 1e-3 * std(tf32) + 16 * eps32 * max|tf32| instead, the
measured spread of deep float32 networks (~1e-4 of the output's std) with a margin; case.json
says which rule gave each number. Integer and bool outputs (detection indices) are exact.

Models whose weights cannot be small (EfficientNetB0, DenseNet121, NASNetMobile, and the full-width
ConvNeXtTiny and ResNet50V2 of ~100 MB each) are not
committed: tests/real_models/test_real_models.py generates them into build/real_models/ with TensorFlow on
first use and reuses them (seeds fixed, so the same versions write the same numbers).
Committed files stay under 2 MB each.
"""

import argparse
import collections
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from tests.conformance.generate import file_stem
from tests.real_models.models import BUILDERS, import_tensorflow, session_config, tf_keras

ROOT = Path(__file__).resolve().parent
REGENERATE = ".venv/bin/python -m tests.real_models.generate"
F32 = np.float32
EPS32 = float(np.finfo(np.float32).eps)
MAX_COMMITTED_BYTES = 2 * 1024 * 1024


# -- TensorFlow's answers, float32 and float64 -----------------------------------------------------

def run_tensorflow(tf, data, feeds, fetches):
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(tf.compat.v1.GraphDef.FromString(data), name="")
    with tf.compat.v1.Session(graph=graph, config=session_config(tf)) as sess:
        values = sess.run(fetches, {f"{name}:0": value for name, value in feeds.items()})
    return [np.asarray(v) for v in values]


def as_float64(tf, data):
    """The same graph with every float32 (attr, placeholder, constant) made float64."""
    from tensorflow.core.framework import types_pb2
    graph_def = tf.compat.v1.GraphDef.FromString(data)
    wide = {types_pb2.DT_FLOAT: types_pb2.DT_DOUBLE}
    nodes = list(graph_def.node)
    for function in graph_def.library.function:   # no-inline calls (ConvNeXt's) run function bodies
        nodes += function.node_def
        for arg in [*function.signature.input_arg, *function.signature.output_arg]:
            if arg.type in wide:
                arg.type = wide[arg.type]
    for node in nodes:
        for attr in node.attr.values():
            if attr.type in wide:   # (assigning a oneof member selects it: only where it is a type)
                attr.type = wide[attr.type]
            if attr.list.type:
                attr.list.type[:] = [wide.get(t, t) for t in attr.list.type]
            if attr.HasField("tensor") and attr.tensor.dtype == types_pb2.DT_FLOAT:
                value = tf.make_ndarray(attr.tensor).astype(np.float64)
                attr.tensor.CopyFrom(tf.make_tensor_proto(value))
    _unfuse_batch_norms(tf, graph_def)
    for node in list(graph_def.node):
        if node.op in FLOAT32_OUTPUT:   # float32 whatever its input: cast back, keeping the node's name
            name = node.name
            node.name = name + "/float32"
            cast = graph_def.node.add(name=name, op="Cast", input=[node.name])
            cast.attr["SrcT"].type = types_pb2.DT_FLOAT
            cast.attr["DstT"].type = types_pb2.DT_DOUBLE
    return graph_def.SerializeToString(deterministic=True)


# ops whose output is float32 for any input dtype
FLOAT32_OUTPUT = ("ResizeBilinear", "ResizeBicubic", "ResizeArea")


def _unfuse_batch_norms(tf, graph_def):
    """TensorFlow has no float64 FusedBatchNorm kernel: each inference-mode one becomes
    y = x * k + (offset - mean * k), k = scale * rsqrt(variance + epsilon), keeping its name."""
    fused = [n for n in graph_def.node if n.op.startswith("FusedBatchNorm")]
    names = {n.name for n in fused}
    for node in graph_def.node:
        for i in node.input:
            source, _, index = i.lstrip("^").partition(":")
            if source in names and index not in ("", "0"):
                raise ValueError(f"'{node.name}' reads output {index} of the batch norm '{source}'")
    for node in fused:
        x, scale, offset, mean, variance = node.input[:5]
        eps = tf.make_tensor_proto(np.float64(node.attr["epsilon"].f))
        base = node.name + "/float64"
        made = []
        if node.attr["is_training"].b:   # the batch's statistics (biased variance), as TF normalises with
            axes = tf.make_tensor_proto(np.array([0, 1, 2], np.int32))
            made = [("axes", "Const", [], {"value": axes}),
                    ("mean", "Mean", [x, base + "/axes"], {"keep_dims": False}),
                    ("sq", "SquaredDifference", [x, base + "/mean"], {}),
                    ("var", "Mean", [base + "/sq", base + "/axes"], {"keep_dims": False})]
            mean, variance = base + "/mean", base + "/var"
        made += [("eps", "Const", [], {"value": eps}),
                ("var_eps", "AddV2", [variance, base + "/eps"], {}),
                ("rsqrt", "Rsqrt", [base + "/var_eps"], {}),
                ("k", "Mul", [scale, base + "/rsqrt"], {}),
                ("xk", "Mul", [x, base + "/k"], {}),
                ("mean_k", "Mul", [mean, base + "/k"], {}),
                ("shift", "Sub", [offset, base + "/mean_k"], {})]
        for suffix, op, inputs, attrs in made:
            extra = graph_def.node.add(name=f"{base}/{suffix}", op=op, input=inputs)
            extra.attr["dtype" if op == "Const" else "T"].type = attrs["value"].dtype if op == "Const" else 2
            if op == "Const":
                extra.attr["value"].tensor.CopyFrom(attrs["value"])
            if op == "Mean":
                extra.attr["Tidx"].type = 3   # DT_INT32
                extra.attr["keep_dims"].b = False
        control = [i for i in node.input if i.startswith("^")]
        node.op = "AddV2"
        del node.input[:]
        node.input.extend([base + "/xk", base + "/shift"] + control)
        for key in list(node.attr):
            if key != "T":
                del node.attr[key]


def float64_reference(tf, data, feeds, fetches):
    """(values, None) from the float64 graph, or (None, why) when TensorFlow cannot run it."""
    wide = {k: v.astype(np.float64) if v.dtype == F32 else v for k, v in feeds.items()}
    try:
        return run_tensorflow(tf, as_float64(tf, data), wide, fetches), None
    except Exception as e:   # TensorFlow lacks a float64 kernel for some op of the graph
        return None, " ".join(str(e).split())[:300]


def tolerance(tf32, ref64):
    """The rule of the module docstring, for one output: (Tolerance fields, what gave them)."""
    if tf32.dtype.kind not in "fc":
        return {"rtol": 0.0, "atol": 0.0, "per_tensor": False, "zero_sign": True}, "exact (not a float)"
    if ref64 is not None:
        err32 = float(np.max(np.abs(tf32.astype(np.float64) - ref64), initial=0.0))
        atol = 8 * err32 + 16 * EPS32 * float(np.max(np.abs(ref64), initial=0.0))
        rule = f"8 * TF's float32 error against float64 ({err32:.3g}) + 16 eps * max|ref64|"
    else:
        atol = 1e-3 * float(np.std(tf32)) + 16 * EPS32 * float(np.max(np.abs(tf32), initial=0.0))
        rule = "no float64 reference: 1e-3 * std(tf32) + 16 eps * max|tf32|"
    return {"rtol": 0.0, "atol": atol, "per_tensor": False, "zero_sign": False}, rule


def census(graph_def):
    ops = collections.Counter(node.op for node in graph_def.node)
    for function in graph_def.library.function:
        ops.update(node.op for node in function.node_def)
    return dict(sorted(ops.items()))


def made_with(tf):
    import keras
    versions = {"tensorflow": tf.__version__, "keras": keras.__version__, "numpy": np.__version__}
    try:
        versions["tf_keras"] = tf_keras().__version__
    except ImportError:
        pass
    return versions


def write_model(tf, model, directory):
    data = model.graph_def.SerializeToString(deterministic=True)
    expected = run_tensorflow(tf, data, model.feeds, model.fetches)
    wide, why = float64_reference(tf, data, model.feeds, model.fetches)
    directory.mkdir(parents=True)
    (directory / "model.pb").write_bytes(data)
    for feed, value in model.feeds.items():
        np.save(directory / f"feed_{file_stem(feed)}.npy", value, allow_pickle=False)
    tolerances, rules = [], []
    for index, (fetch, value) in enumerate(zip(model.fetches, expected)):
        np.save(directory / f"expected_{file_stem(fetch)}.npy", value, allow_pickle=False)
        t, rule = tolerance(value, None if wide is None else wide[index])
        tolerances.append(t)
        rules.append(rule)
    spec = {
        "description": model.description,
        "feeds": {feed: f"feed_{file_stem(feed)}.npy" for feed in model.feeds},
        "fetches": list(model.fetches),
        "expected": [f"expected_{file_stem(fetch)}.npy" for fetch in model.fetches],
        "exact": False,
        "tolerances": tolerances,
        "tolerance_rules": rules,
        "float64_reference": "TensorFlow ran the float64 graph" if wide is not None else f"unavailable: {why}",
        "skip": {},
        "ops": census(model.graph_def),
        "made_with": made_with(tf),
    }
    (directory / "case.json").write_text(json.dumps(spec, indent=2) + "\n")
    return spec


def generate(names, root=ROOT):
    """Writes the named models; each replaces its old directory only when complete."""
    tf = import_tensorflow()
    root.mkdir(parents=True, exist_ok=True)
    written = {}
    with tempfile.TemporaryDirectory(dir=root, prefix=".models-") as scratch:
        for name in names:
            written[name] = write_model(tf, BUILDERS[name].fn(tf), Path(scratch) / name)
        for name in names:
            target = root / name
            if target.exists():
                shutil.rmtree(target)
            (Path(scratch) / name).rename(target)
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"models to write (default: every committed one); all: {', '.join(BUILDERS)}")
    parser.add_argument("--out", type=Path, default=ROOT, help="the directory to write into")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in BUILDERS]
    if unknown:
        parser.error(f"unknown model {', '.join(unknown)}; the models are {', '.join(BUILDERS)}")
    names = args.names or [n for n, b in BUILDERS.items() if b.committed]
    written = generate(names, args.out.resolve())
    for name, spec in written.items():
        size = (args.out / name / "model.pb").stat().st_size
        print(f"{name}: {size} bytes, {sum(spec['ops'].values())} nodes, float64 reference: "
              f"{spec['float64_reference'][:80]}")
        if BUILDERS[name].committed and args.out.resolve() == ROOT and size > MAX_COMMITTED_BYTES:
            print(f"  over {MAX_COMMITTED_BYTES} bytes: too large to commit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
