"""Real models, every engine side by side: Keras MobileNetV2 and ResNet50 at 224x224, and a
Transformer encoder, at batch 1 and 8.

    .venv/bin/python benchmarks/bench_real_models.py [--models mobilenet_v2,resnet50,transformer_encoder]
                                                     [--batches 1,8] [--rounds 7] [--runs 5] [--seconds 1]
                                                     [--warmup 0.5] [--settle 0.3]

TensorFlow makes each model with random seeded weights and freezes it the standard way
(convert_variables_to_constants_v2), once, into build/bench_models/; tf2onnx converts the
same frozen graph for ONNX Runtime. The encoder is BERT-small's shape: 4 layers of Keras'
MultiHeadAttention (8 heads, width 512), residual adds, LayerNormalization and a 2048-wide
feed-forward with (tanh) GELU, over 128 positions of float inputs (the embeddings). Engines:
  onnxruntime   the converted model, default session options and threads
  tf-session    TensorFlow's tf.compat.v1 Session on the frozen graph, default threads
  graphdef      graphdef.Session() on the same file: engine auto, so the C++ core in process
                when it has every kernel (the issue wants it within 10% of graphrun-cc)
  graphdef-python  graphdef.Session(engine="python"): the numpy reference engine (tf.load:
                optimized at load by default)
  graphdef-unoptimized  the numpy engine with load(optimize=False) (not run unless --engines names it)
  graphrun-cc   `graphrun-cc bench`, which times its runs inside its own process

Each engine lives in its own worker process for the whole run, so one's threads, caches and
memory do not disturb another's and its peak memory (ru_maxrss) is its own. The workers take
turns, round by round (`--rounds`), each doing timed runs for `--seconds` a turn, at least
`--runs` (so a small model's turn has hundreds of runs, a large one's a few), so a burst of load
elsewhere on the machine hits them alike (every other round in reverse order); the figure is
the median over all timed runs. Every engine warms up alike before its timed runs in each turn:
untimed runs for `--warmup` seconds, at least 3 (an idle engine's threads sleep and its caches
go cold between turns, and graphrun-cc starts a fresh process each turn). Each turn starts
after `--settle` seconds of idle machine, so no engine's turn begins while the previous
engine's threads still spin. A second table pairs the
engines round by round: each round's median over ONNX Runtime's of the same round, whose median
and range are steadier than the ratio of overall medians when the machine's speed drifts (on a
shared VM, by tens of percent within a minute).
graphrun-cc is started once per turn; its figure is its own in-process timing of the runs,
not the process. Before timing, every engine's output is checked against TensorFlow's
within a relative tolerance of 1e-3 of the output's range (deep float32 networks differ by
about 1e-4 of it from a float64 evaluation).

Ratios are printed against ONNX Runtime, the deployed engine the issue names; nothing is
asserted. Needs the bench extras (`make bench` installs them).
"""

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "build" / "bench_models"
ENGINES = ("onnxruntime", "tf-session", "graphdef", "graphdef-python", "graphrun-cc")
# The Keras applications, and the model name of the encoder built here
APPLICATIONS = {"mobilenet_v2": "MobileNetV2", "resnet50": "ResNet50"}
MODELS = (*APPLICATIONS, "transformer_encoder")
# untimed runs each turn, at least, whatever --warmup's seconds
MIN_WARMUP_RUNS = 3
ENCODER = {"layers": 4, "width": 512, "heads": 8, "ffn": 2048, "positions": 128}


# -- making the models (TensorFlow, once) -------------------------------------------------------

def keras_model(name):
    """(the Keras model, the shape of one input example)."""
    import tensorflow as tf
    if name in APPLICATIONS:
        model = getattr(tf.keras.applications, APPLICATIONS[name])(weights=None, input_shape=(224, 224, 3),
                                                                   classifier_activation=None)
        return model, [224, 224, 3]
    import keras
    layers = keras.layers
    shape = [ENCODER["positions"], ENCODER["width"]]
    inputs = keras.Input(shape)
    x = inputs
    for _ in range(ENCODER["layers"]):
        attended = layers.MultiHeadAttention(num_heads=ENCODER["heads"],
                                             key_dim=ENCODER["width"] // ENCODER["heads"])(x, x)
        x = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([x, attended]))
        # tanh GELU, BERT's own: tf2onnx cannot convert the exact form's Erfc
        y = layers.Dense(ENCODER["ffn"], activation=lambda t: keras.activations.gelu(t, approximate=True))(x)
        y = layers.Dense(ENCODER["width"])(y)
        x = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([x, y]))
    return keras.Model(inputs, x), shape


def make_model(name):
    """build/bench_models/NAME.pb (batch dim free) and NAME.onnx, with input/output names and the
    input's example shape in NAME.json."""
    pb, onnx_path, meta = CACHE / f"{name}.pb", CACHE / f"{name}.onnx", CACHE / f"{name}.json"
    if pb.exists() and onnx_path.exists() and meta.exists() and "shape" in json.loads(meta.read_text()):
        return json.loads(meta.read_text())
    import tensorflow as tf
    import tf2onnx
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    tf.keras.utils.set_random_seed(0)
    model, shape = keras_model(name)
    spec = tf.TensorSpec([None, *shape], tf.float32, name="images" if name in APPLICATIONS else "inputs")
    frozen = convert_variables_to_constants_v2(tf.function(model).get_concrete_function(spec))
    graph_def = frozen.graph.as_graph_def()
    inputs = [t.name for t in frozen.inputs]
    outputs = [t.name for t in frozen.outputs]
    CACHE.mkdir(parents=True, exist_ok=True)
    pb.write_bytes(graph_def.SerializeToString())
    model_proto, _ = tf2onnx.convert.from_graph_def(graph_def, input_names=inputs, output_names=outputs,
                                                    opset=17)
    onnx_path.write_bytes(model_proto.SerializeToString())
    info = {"inputs": inputs, "outputs": outputs, "shape": shape}
    meta.write_text(json.dumps(info))
    return info


# -- workers: one engine each, driven over stdin/stdout ----------------------------------------

def load_engine(engine, name, info):
    """A function input batch -> output array for `engine`."""
    pb, onnx_path = CACHE / f"{name}.pb", CACHE / f"{name}.onnx"
    if engine == "onnxruntime":
        import onnxruntime as ort
        session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
        feed_name = session.get_inputs()[0].name
        return lambda x: session.run(None, {feed_name: x})[0]
    if engine == "tf-session":
        import tensorflow as tf
        tf1 = tf.compat.v1
        tf1.disable_eager_execution()
        graph_def = tf1.GraphDef.FromString(pb.read_bytes())
        graph = tf1.Graph()
        with graph.as_default():
            tf1.import_graph_def(graph_def, name="")
        session = tf1.Session(graph=graph)
        fetch = graph.get_tensor_by_name(info["outputs"][0])
        feed = graph.get_tensor_by_name(info["inputs"][0])
        return lambda x: session.run(fetch, {feed: x})
    if engine in ("graphdef", "graphdef-python", "graphdef-unoptimized"):
        sys.path.insert(0, str(ROOT))  # this checkout's graphdef, whichever one the venv installed
        import graphdef
        graph = graphdef.load(str(pb), optimize=engine != "graphdef-unoptimized")
        session = graphdef.Session(graph=graph, engine="auto" if engine == "graphdef" else "python")
        fetch = graph.get_tensor_by_name(info["outputs"][0])
        feed = graph.get_tensor_by_name(info["inputs"][0])
        return lambda x: session.run(fetch, {feed: x})
    raise ValueError(engine)


def worker(engine, name):
    """Reads commands ("check BATCH", "time BATCH RUNS SECONDS WARMUP_SECONDS", "quit"); answers one
    JSON line each."""
    import numpy as np
    info = json.loads((CACHE / f"{name}.json").read_text())
    run = load_engine(engine, name, info)
    for line in sys.stdin:
        words = line.split()
        if words[0] == "quit":
            break
        x = examples(info, int(words[1]))
        if words[0] == "check":
            np.save(CACHE / f"{name}.{engine}.b{words[1]}.out.npy", run(x))
            answer = {}
        else:
            warm_until, warm_runs = time.perf_counter() + float(words[4]), 0
            while warm_runs < MIN_WARMUP_RUNS or time.perf_counter() < warm_until:
                run(x)
                warm_runs += 1
            seconds, until = [], time.perf_counter() + float(words[3])
            while len(seconds) < int(words[2]) or time.perf_counter() < until:
                start = time.perf_counter()
                run(x)
                seconds.append(time.perf_counter() - start)
            answer = {"seconds": seconds}
        answer["maxrss_mb"] = peak_memory_mb()
        print(json.dumps(answer), flush=True)


def peak_memory_mb():
    """This process's peak resident memory since exec (ru_maxrss would include the parent's at fork)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def examples(info, batch):
    """The input batch every engine gets: uniform in [-1, 1), seeded by the batch size."""
    import numpy as np
    return np.random.default_rng(batch).uniform(-1, 1, (batch, *info["shape"])).astype(np.float32)


class Worker:
    def __init__(self, engine, name):
        self.proc = subprocess.Popen([sys.executable, __file__, "--worker", engine, name], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def ask(self, command):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError(f"worker for {command!r} died")
        return json.loads(answer)

    def close(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.close()
        self.proc.wait()


class CcEngine:
    """graphrun-cc, one process a turn: `bench` for timing, a plain run with --out for the check."""

    def __init__(self, name):
        self.name = name
        self.last_median = {}  # batch -> seconds a run in the last turn, for the warm-up count
        self.info = json.loads((CACHE / f"{name}.json").read_text())

    def feeds(self, batch):
        import numpy as np
        path = CACHE / f"{self.name}.feeds.b{batch}.npz"
        if not path.exists():
            np.savez(path, **{self.info["inputs"][0].split(":")[0]: examples(self.info, batch)})
        return path

    def run(self, *args):
        from graphdef._native import executable_path  # the graphrun-cc this graphdef carries
        proc = subprocess.Popen([str(executable_path()), *map(str, args)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        out, err = proc.stdout.read(), proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak memory
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise RuntimeError(f"graphrun-cc {args[0]} failed: {err.strip()}")
        self.maxrss_mb = max(getattr(self, "maxrss_mb", 0.0), usage.ru_maxrss / 1024)
        return out

    def ask(self, command):
        import numpy as np
        words = command.split()
        batch, model = int(words[1]), CACHE / f"{self.name}.pb"
        fetch = self.info["outputs"][0]
        if words[0] == "check":
            out = CACHE / "cc_out"
            self.run(model, "--feeds", self.feeds(batch), "--fetch", fetch, "--out", out)
            saved = out / (fetch.replace("/", "_").replace(":", "_") + ".npy")
            np.save(CACHE / f"{self.name}.graphrun-cc.b{batch}.out.npy", np.load(saved))
            return {}
        # A fresh process a turn. bench's first run (which also reorders the weights) is untimed,
        # then as many warm-up runs as fill the other engines' warm-up seconds, counted from this
        # engine's last turn (20 before the first: a handful of warm-up runs left MobileNetV2 at
        # batch 1 measurably slower than 20 or more did).
        min_runs, timed_seconds, warmup_seconds = int(words[2]), float(words[3]), float(words[4])
        last = self.last_median.get(batch)
        warmup = 20 if last is None else max(MIN_WARMUP_RUNS, math.ceil(warmup_seconds / last))
        # As many timed runs as the others make in their seconds, at least min_runs.
        runs = min_runs if last is None else max(min_runs, math.ceil(timed_seconds / last))
        report = json.loads(self.run("bench", model, "--feeds", self.feeds(batch), "--fetch", fetch,
                                     "--warmup", warmup, "--runs", runs, "--json"))
        # bench reports percentiles, not each run: its median stands for this turn's runs.
        self.last_median[batch] = report["latency_seconds"]["p50"]
        seconds = [report["latency_seconds"]["p50"]] * report["runs"]
        return {"seconds": seconds, "maxrss_mb": self.maxrss_mb}

    def close(self):
        pass


def check_outputs(name, batch, engines):
    import numpy as np
    reference = np.load(CACHE / f"{name}.tf-session.b{batch}.out.npy").astype(np.float64)
    scale = float(reference.max() - reference.min()) or 1.0
    for engine in engines:
        if engine == "tf-session":
            continue
        out = np.load(CACHE / f"{name}.{engine}.b{batch}.out.npy").astype(np.float64)
        error = float(np.abs(out - reference).max()) / scale
        status = "ok" if error <= 1e-3 else "DIFFERS"
        print(f"  {engine:12s} output vs TensorFlow: max error {error:.1e} of the range ({status})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--runs", type=int, default=5, help="timed runs a turn, at least (default 5)")
    parser.add_argument("--seconds", type=float, default=1.0,
                        help="seconds of timed runs a turn, at least (default 1)")
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--warmup", type=float, default=0.5,
                        help="seconds of untimed runs (at least 3) before each turn's timed runs (default 0.5)")
    parser.add_argument("--settle", type=float, default=0.3,
                        help="seconds of idle machine before each engine's turn (default 0.3)")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--make", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.make:
        make_model(args.make)
        return 0
    if args.worker:
        worker(*args.worker)
        return 0
    engines = args.engines.split(",")
    rows = []
    for name in args.models.split(","):
        # TensorFlow makes the model in a child process: this one stays small, since a child's
        # ru_maxrss starts from its parent's at fork.
        subprocess.run([sys.executable, __file__, "--make", name], check=True)
        workers = {e: (CcEngine(name) if e == "graphrun-cc" else Worker(e, name)) for e in engines}
        try:
            for batch in [int(b) for b in args.batches.split(",")]:
                print(f"{name} batch {batch}:", flush=True)
                for w in workers.values():
                    w.ask(f"check {batch}")
                if "tf-session" in engines:
                    check_outputs(name, batch, engines)
                seconds = {e: [] for e in engines}
                turns = {e: [] for e in engines}  # each round's median, for the paired ratios
                memory = {}
                for round_number in range(args.rounds):
                    # every other round in reverse order, so no engine always follows the same one
                    order = list(workers.items())
                    for engine, w in order if round_number % 2 == 0 else order[::-1]:
                        # The engine before may still spin its idle threads (OpenBLAS, ONNX Runtime
                        # and TensorFlow all do for a while after a run): let them sleep first.
                        time.sleep(args.settle)
                        answer = w.ask(f"time {batch} {args.runs} {args.seconds} {args.warmup}")
                        seconds[engine] += answer["seconds"]
                        turns[engine].append(statistics.median(answer["seconds"]))
                        memory[engine] = answer["maxrss_mb"]
                rows.append((name, batch, {e: statistics.median(s) for e, s in seconds.items()}, memory, turns))
        finally:
            for w in workers.values():
                w.close()
    print_table(rows, engines)
    return 0


def paired_ratios(turns, engine, base):
    """The engine's round medians over the base's of the same round: the machine's speed, which
    drifts by tens of percent over a minute on a shared VM, is nearly the same within one round."""
    return sorted(a / b for a, b in zip(turns[engine], turns[base]))


def print_table(rows, engines):
    base = "onnxruntime" if "onnxruntime" in engines else engines[0]
    print()
    print("median ms per run (ratio to %s) and peak memory MB" % base)
    header = f"{'model':20s} {'batch':>5s} " + " ".join(f"{e:>22s}" for e in engines)
    print(header)
    for name, batch, medians, memory, _ in rows:
        cells = []
        for e in engines:
            ratio = medians[e] / medians[base]
            cells.append(f"{medians[e] * 1e3:8.1f} ({ratio:4.2f}x) {memory.get(e, 0):5.0f}M")
        print(f"{name:20s} {batch:5d} " + " ".join(f"{c:>22s}" for c in cells))
    print()
    print("ratio to %s round by round (each round's medians; median, and lowest-highest round)" % base)
    print(header)
    for name, batch, _, _, turns in rows:
        cells = []
        for e in engines:
            ratios = paired_ratios(turns, e, base)
            cells.append(f"{statistics.median(ratios):4.2f}x ({ratios[0]:4.2f}-{ratios[-1]:4.2f})")
        print(f"{name:20s} {batch:5d} " + " ".join(f"{c:>22s}" for c in cells))
    if "tf-session" in engines:  # the other bar: graphdef's Session against TensorFlow's
        for name, batch, medians, _, _ in rows:
            print(f"{name} batch {batch}: " + ", ".join(
                f"{e} {medians[e] / medians['tf-session']:.2f}x TF Session" for e in engines
                if e not in ("tf-session", "onnxruntime")))
    if "graphdef" in engines and "graphrun-cc" in engines:  # Session() runs graphrun-cc's core in process
        print()
        for name, batch, medians, _, turns in rows:
            ratios = paired_ratios(turns, "graphdef", "graphrun-cc")
            print(f"{name} batch {batch}: Session() {medians['graphdef'] / medians['graphrun-cc']:.2f}x "
                  f"graphrun-cc (round by round {statistics.median(ratios):.2f}x)")


if __name__ == "__main__":
    sys.exit(main())
