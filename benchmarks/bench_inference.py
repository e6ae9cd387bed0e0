"""Inference on TensorFlow-made frozen models: graphdef's runtimes against numpy and TensorFlow, side by side.

    .venv/bin/python benchmarks/bench_inference.py

Models: the frozen CNN of tests/tf_models/cnn (28x28x1 input, two convolutions, max and
average pooling, a dense layer, softmax) at batch 64, and the frozen MLP of
tests/tf_models/mlp (20-32-10, softmax) at batch 256. Targets (issue 4), printed, never
asserted:
  graphdef Session   within 1.15x of a hand-written numpy forward pass of the same model
  graphrun-cc        no slower than TensorFlow's Session (tf.compat.v1, default threads)

How each is timed. In-process engines (numpy, the Session, TensorFlow): one warm-up call,
then the best of 7 repeats of the mean over a batch of calls, so start-up and planning
are excluded and the least-disturbed repeat counts; the engines take turns repeat by
repeat, so a burst of load elsewhere on the machine hits them alike. numpy's BLAS runs one
thread unless OPENBLAS_NUM_THREADS / OMP_NUM_THREADS say otherwise (the numpy pass and the
Session share it, and one thread is the steadiest on a shared machine); TensorFlow is timed
with its default threads and with one. graphrun-cc runs as a process, so its
start-up and model load are taken out by difference: the same command with `--run probs
--steps 1` and with `--steps 1+K` (the runner executes the target K more times in one
process, feeds in place), each the best of 7; the per-run time is the difference / K.
The numpy pass reads its weights from the frozen file's Consts and is checked against
TensorFlow's committed outputs before it is timed, so it is the same model.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before TensorFlow is imported, to quiet its C++ logging
for _threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):   # read when numpy loads its BLAS
    os.environ.setdefault(_threads, "1")

import numpy as np  # noqa: E402
from numpy.lib.stride_tricks import sliding_window_view  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: make graphdef and tests importable from the checkout
from graphdef._native import executable_path  # noqa: E402
MODELS = ROOT / "tests" / "tf_models"
RUNNER = executable_path()  # $GRAPHRUN_CC, else the graphrun-cc this graphdef carries
REPEATS = 7
SESSION_TARGET, CC_TARGET = 1.15, 1.0


# -- the hand-written numpy forward passes ------------------------------------------------------

def softmax(logits):
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def conv_same(x, kernel, bias):
    """A stride-1 SAME convolution as one matrix product over the patch matrix (im2col), plus bias."""
    kh, kw, c, f = kernel.shape
    top, left = (kh - 1) // 2, (kw - 1) // 2
    padded = np.pad(x, ((0, 0), (top, kh - 1 - top), (left, kw - 1 - left), (0, 0)))
    patches = sliding_window_view(padded, (kh, kw), axis=(1, 2))          # [n, h, w, c, kh, kw]
    n, h, w = x.shape[:3]
    columns = patches.transpose(0, 1, 2, 4, 5, 3).reshape(n * h * w, kh * kw * c)
    return (columns @ kernel.reshape(-1, f)).reshape(n, h, w, f) + bias


def max_pool_2x2(x):
    """2x2, stride 2, VALID: the larger of four strided views, elementwise."""
    return np.maximum(np.maximum(x[:, 0::2, 0::2], x[:, 1::2, 0::2]), np.maximum(x[:, 0::2, 1::2], x[:, 1::2, 1::2]))


def avg_pool_3x3_stride2_same(x):
    """TensorFlow's SAME average: the window's mean over the cells inside the image only."""
    n, h, w, c = x.shape
    oh, ow = -(-h // 2), -(-w // 2)
    pad_h, pad_w = max((oh - 1) * 2 + 3 - h, 0), max((ow - 1) * 2 + 3 - w, 0)
    top, left = pad_h // 2, pad_w // 2
    padded = np.pad(x, ((0, 0), (top, pad_h - top), (left, pad_w - left), (0, 0)))
    ones = np.pad(np.ones((h, w), x.dtype), ((top, pad_h - top), (left, pad_w - left)))
    sums = np.zeros((n, oh, ow, c), x.dtype)
    counts = np.zeros((oh, ow), x.dtype)
    for i in range(3):          # nine strided views, one per window offset
        for j in range(3):
            sums += padded[:, i:i + 2 * oh - 1:2, j:j + 2 * ow - 1:2]
            counts += ones[i:i + 2 * oh - 1:2, j:j + 2 * ow - 1:2]
    return sums / counts[None, :, :, None]


def mlp_forward(weights):
    w1, b1, w2, b2 = (weights[k] for k in ("dense1/kernel", "dense1/bias", "dense2/kernel", "dense2/bias"))

    def forward(x):
        return softmax(np.maximum(x @ w1 + b1, 0) @ w2 + b2)
    return forward


def cnn_forward(weights):
    k1, b1, k2, b2, wd, bd = (weights[k] for k in ("conv1/kernel", "conv1/bias", "conv2/kernel", "conv2/bias",
                                                   "dense/kernel", "dense/bias"))

    def forward(x):
        h = max_pool_2x2(np.maximum(conv_same(x, k1, b1), 0))
        h = avg_pool_3x3_stride2_same(np.maximum(conv_same(h, k2, b2), 0))
        return softmax(h.reshape(len(h), -1) @ wd + bd)
    return forward


# name: (batch, input placeholder, input shape, numpy forward pass)
CASES = {
    "cnn": (64, "image", (28, 28, 1), cnn_forward),
    "mlp": (256, "x", (20,), mlp_forward),
}
OUTPUT = "probs"


# -- engines ------------------------------------------------------------------------------------

def best_seconds(engines):
    """{label: seconds per call}: each engine's best repeat, the engines taking turns repeat by repeat."""
    numbers = {label: calls_for(fn) for label, fn in engines.items()}
    best = dict.fromkeys(engines, float("inf"))
    for _ in range(REPEATS):
        for label, fn in engines.items():
            best[label] = min(best[label], timeit.timeit(fn, number=numbers[label]) / numbers[label])
    return best


def calls_for(fn, budget=0.2):
    """How many calls make one repeat last about `budget` seconds (the first call also warms up)."""
    fn()
    start = timeit.default_timer()
    fn()
    once = max(timeit.default_timer() - start, 1e-6)
    return max(3, int(budget / once))


def frozen_weights(graph_def):
    from graphdef.wire.serialize import ndarray_from_proto
    return {node.name: np.array(ndarray_from_proto(node.attr["value"].tensor))
            for node in graph_def.node if node.op == "Const"}


def check_numpy_pass(name, forward):
    """The hand-written pass must give TensorFlow's committed outputs, or it is another model."""
    from tests.conformance import replay
    case = replay.load(MODELS / name)
    probs = forward(next(iter(case.feeds.values())))
    expected = case.expected[case.fetches.index(f"{OUTPUT}:0")]
    if not np.allclose(probs, expected, rtol=1e-5, atol=1e-6):
        raise SystemExit(f"{name}: the numpy forward pass differs from TensorFlow's outputs by "
                         f"{np.abs(probs - expected).max():.3g}; fix it before timing it")


def graphdef_session(model, input_name):
    import graphdef
    from graphdef.wire.serialize import load
    graph = load(model)
    sess = graphdef.Session(graph=graph)
    x, probs = graph.get_tensor_by_name(f"{input_name}:0"), graph.get_tensor_by_name(f"{OUTPUT}:0")
    return lambda batch: sess.run(probs, {x: batch})


def tensorflow_sessions(model, input_name):
    """{label: run(batch)} for TensorFlow's Session with default threads and with one thread; {} without TF."""
    try:
        import tensorflow as tf
    except ImportError:
        return {}
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(tf.compat.v1.GraphDef.FromString(model.read_bytes()), name="")
    x, probs = graph.get_tensor_by_name(f"{input_name}:0"), graph.get_tensor_by_name(f"{OUTPUT}:0")
    one = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    sessions = {"TensorFlow Session": tf.compat.v1.Session(graph=graph),
                "TensorFlow Session, 1 thread": tf.compat.v1.Session(graph=graph, config=one)}
    return {label: (lambda batch, s=s: s.run(probs, {x: batch})) for label, s in sessions.items()}


def cc_kernels():
    proc = subprocess.run([str(RUNNER), "--list-kernels"], capture_output=True, text=True, timeout=60)
    return {line.split()[0] for line in proc.stdout.splitlines() if line.strip()} if proc.returncode == 0 else set()


def cc_model(model, workdir):
    """The model graphrun-cc can run, and a note: the file itself, a stand-in, or None and why not.

    While the runner lacks only BiasAdd, each BiasAdd (NHWC: the bias added along the last
    axis) is rewritten as the AddV2 it equals, so the runner can be timed on the same
    arithmetic; the note says so.
    """
    from graphdef._proto import graph_pb2
    graph_def = graph_pb2.GraphDef.FromString(model.read_bytes())
    missing = sorted({node.op for node in graph_def.node} - cc_kernels())
    if not missing:
        return model, ""
    if missing == ["BiasAdd"] and "AddV2" in cc_kernels():
        for node in graph_def.node:
            if node.op == "BiasAdd":
                node.op = "AddV2"
                del node.attr["data_format"]
        stand_in = workdir / f"{model.parent.name}_addv2.pb"
        stand_in.write_bytes(graph_def.SerializeToString(deterministic=True))
        return stand_in, "BiasAdd run as AddV2: graphrun-cc has no BiasAdd kernel yet"
    return None, f"graphrun-cc has no kernel for {', '.join(missing)}"


def time_cc(model, input_name, batch, workdir):
    """Per-run seconds of graphrun-cc, start-up and load taken out by difference; also its output."""
    feed = workdir / f"{input_name}_{len(batch)}.npy"
    np.save(feed, batch)
    base = [str(RUNNER), str(model), "--feed", f"{input_name}=@{feed}"]
    fetched = subprocess.run(base + ["--fetch", f"{OUTPUT}:0", "--json"], capture_output=True, text=True)
    if fetched.returncode != 0:
        raise RuntimeError(f"graphrun-cc failed: {fetched.stderr.strip()}")
    from tests.conformance.replay import from_json_output
    output = from_json_output(json.loads(fetched.stdout)["outputs"][0])[1]

    def best_process_seconds(steps):
        command = base + ["--run", OUTPUT, "--steps", str(steps)]
        times = []
        for _ in range(REPEATS):
            start = timeit.default_timer()
            done = subprocess.run(command, capture_output=True)
            times.append(timeit.default_timer() - start)
            if done.returncode != 0:
                raise RuntimeError(f"graphrun-cc failed: {done.stderr.decode().strip()}")
        return min(times)

    single = best_process_seconds(1)
    # enough extra runs that they take about half a second beyond the process itself
    probe = best_process_seconds(11) - single
    extra = max(10, int(0.5 / max(probe / 10, 1e-6)))
    many = best_process_seconds(1 + extra)
    return max(many - single, 0.0) / extra, single, output


# -- the table ----------------------------------------------------------------------------------

def main():
    import graphdef  # noqa: F401  (fail early, before any timing, if the checkout is not set up)
    from graphdef._proto import graph_pb2
    rows = []
    notes = []
    workdir = Path(tempfile.mkdtemp(prefix="bench_inference-"))
    try:
        for name, (size, input_name, shape, make_forward) in CASES.items():
            model = MODELS / name / "model.pb"
            forward = make_forward(frozen_weights(graph_pb2.GraphDef.FromString(model.read_bytes())))
            check_numpy_pass(name, forward)
            batch = np.random.default_rng(0).normal(size=(size, *shape)).astype(np.float32)
            reference = forward(batch)

            runs = {"numpy forward pass": forward, "graphdef Session": graphdef_session(model, input_name)}
            tensorflow = tensorflow_sessions(model, input_name)
            runs.update(tensorflow)
            if not tensorflow:
                notes.append(f"{name}: TensorFlow is not installed (make test installs it); no TensorFlow figures")
            for label, run in runs.items():
                assert np.allclose(run(batch), reference, rtol=1e-5, atol=1e-6), f"{name}: {label} disagrees"
            seconds = best_seconds({label: (lambda run=run: run(batch)) for label, run in runs.items()})
            tf_seconds = seconds.get("TensorFlow Session")   # the target: TensorFlow as users run it
            for label in runs:
                ratio = seconds[label] / seconds["numpy forward pass"] if label == "graphdef Session" else None
                rows.append((name, size, label, seconds[label], ratio,
                             f"<= {SESSION_TARGET:.2f}x numpy" if ratio else None))

            if not RUNNER.exists():
                notes.append(f"{name}: {RUNNER} is missing (make cc builds it); no graphrun-cc figures")
                continue
            runnable, note = cc_model(model, workdir)
            if runnable is None:
                rows.append((name, size, "graphrun-cc", None, None, note))
                continue
            per_run, process, cc_out = time_cc(runnable, input_name, batch, workdir)
            assert np.allclose(cc_out, reference, rtol=1e-5, atol=1e-6), f"{name}: graphrun-cc disagrees"
            label = "graphrun-cc" + (" (stand-in)" if note else "")
            ratio = per_run / tf_seconds if tf_seconds else None
            rows.append((name, size, label, per_run, ratio, f"<= {CC_TARGET:.2f}x TensorFlow" if ratio else None))
            notes.append(f"{name}: graphrun-cc process with one run (start-up, load, one run): {process * 1e3:.1f} ms")
            if note:
                notes.append(f"{name}: {note}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    print(f"{'model':5s} {'batch':>5s}  {'engine':30s} {'ms/run':>9s} {'ratio':>7s}  target")
    for name, size, engine, seconds, ratio, target in rows:
        timing = f"{seconds * 1e3:9.3f}" if seconds is not None else f"{'n/a':>9s}"
        if ratio is None:
            print(f"{name:5s} {size:5d}  {engine:30s} {timing} {'':7s}  {target or ''}")
            continue
        limit = SESSION_TARGET if "numpy" in target else CC_TARGET
        verdict = "ok" if ratio <= limit else "MISSED"
        print(f"{name:5s} {size:5d}  {engine:30s} {timing} {ratio:6.2f}x  {target}: {verdict}")
    for note in notes:
        print(f"note: {note}")
    blas = os.environ.get("OPENBLAS_NUM_THREADS")
    print(f"note: {os.cpu_count()} CPUs; numpy {np.__version__} with {blas} BLAS thread(s); best of {REPEATS} "
          "repeats; graphrun-cc per run = (time of 1+K runs - time of 1 run) / K, one process each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
