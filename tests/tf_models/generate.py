"""Builds, briefly trains and freezes small models with real TensorFlow; writes tests/tf_models/<name>/.

    .venv/bin/python -m tests.tf_models.generate            # rewrite every model directory
    .venv/bin/python -m tests.tf_models.generate mlp cnn    # only these

Unlike tests/conformance (graphs built here, answers from numpy), these graphs are made by
TensorFlow the way users make them, tf.compat.v1 layers, Keras 3 and both freezing paths,
so they carry whatever TensorFlow really writes: `<var>/read` Identity nodes, `_class`
attrs, former ReadVariableOps, Keras' NoOp sink, dropout residue. The answers come from
TensorFlow too: each frozen file is read back from its bytes into a fresh TensorFlow graph
and run on the committed feeds, so the expected values belong to exactly the bytes
committed.

Each directory holds the files tests/conformance/replay.py reads (model.pb, feed_*.npy,
expected_*.npy, case.json), so the same replay helpers judge every runtime. case.json adds
"ops", the file's op census (op type -> node count), and "made_with", the versions used.
Training is seeded, single-threaded and deterministic, so a rerun with the same versions
writes the same numbers; the committed files are what the suite checks, with or without
TensorFlow installed.
"""

import argparse
import collections
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from graphdef._proto import graph_pb2
from tests.conformance import replay
from tests.conformance.generate import file_stem
from tests.tf_models import models, zoo  # noqa: F401  (each registers its builders, the zoo last)
from tests.tf_models.building import BUILDERS, Model, session_config

ROOT = Path(__file__).resolve().parent
REGENERATE = ".venv/bin/python -m tests.tf_models.generate"


# -- writing ---------------------------------------------------------------------------------

# builders kept in a file of their own
from tests.tf_models import tf2_functions  # noqa: E402
for _name, _build in tf2_functions.BUILDERS.items():
    BUILDERS[_name] = (lambda build: lambda tf: Model(*build(tf)))(_build)


def import_tensorflow():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before the import, to quiet its C++ logging
    try:
        import tensorflow as tf
    except ImportError:
        raise SystemExit("the generator needs TensorFlow: .venv/bin/python -m pip install -e '.[oracle]'") from None
    tf.get_logger().setLevel("ERROR")
    # One thread each way, so every reduction runs in one order. (enable_op_determinism would
    # also do, but it swaps some ops for others, e.g. the sparse cross-entropy, changing the graphs.)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    return tf


def tensorflow_outputs(tf, model_bytes, feeds, fetches):
    """What TensorFlow computes from the file's bytes alone, in a graph of its own."""
    graph_def = tf.compat.v1.GraphDef.FromString(model_bytes)
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
    with tf.compat.v1.Session(graph=graph, config=session_config(tf)) as sess:
        values = sess.run(fetches, {f"{name}:0": value for name, value in feeds.items()})
    return [np.asarray(v) for v in values]


def census(graph_def):
    return dict(sorted(collections.Counter(node.op for node in graph_def.node).items()))


def made_with(tf):
    import keras
    return {"tensorflow": tf.__version__, "keras": keras.__version__, "numpy": np.__version__}


def write_model(tf, name, model, directory):
    data = model.graph_def.SerializeToString(deterministic=True)  # as tf.io.write_graph writes it
    expected = tensorflow_outputs(tf, data, model.feeds, model.fetches)
    directory.mkdir(parents=True)
    (directory / "model.pb").write_bytes(data)
    for feed, value in model.feeds.items():
        np.save(directory / f"feed_{file_stem(feed)}.npy", value, allow_pickle=False)
    for fetch, value in zip(model.fetches, expected):
        np.save(directory / f"expected_{file_stem(fetch)}.npy", value, allow_pickle=False)
    spec = {
        "description": model.description,
        "feeds": {feed: f"feed_{file_stem(feed)}.npy" for feed in model.feeds},
        "fetches": list(model.fetches),
        "expected": [f"expected_{file_stem(fetch)}.npy" for fetch in model.fetches],
        "exact": False,
        "tolerances": replay.tolerance_spec(graph_pb2.GraphDef.FromString(data), model.fetches, expected),
        "skip": {},
        "ops": census(model.graph_def),
        "made_with": made_with(tf),
    }
    (directory / "case.json").write_text(json.dumps(spec, indent=2) + "\n")
    return spec


def generate(names, root=ROOT):
    """Writes the named models; each goes to a scratch directory first and replaces its old one
    only when complete, so a failing builder leaves the committed files untouched."""
    tf = import_tensorflow()
    written = {}
    with tempfile.TemporaryDirectory(dir=root, prefix=".models-") as scratch:
        for name in names:
            model = BUILDERS[name](tf)
            written[name] = write_model(tf, name, model, Path(scratch) / name)
        for name in names:
            target = root / name
            if target.exists():
                shutil.rmtree(target)
            (Path(scratch) / name).rename(target)
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"models to write (default: all: "
                        f"{', '.join(BUILDERS)})")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in BUILDERS]
    if unknown:
        parser.error(f"unknown model {', '.join(unknown)}; the models are {', '.join(BUILDERS)}")
    written = generate(args.names or list(BUILDERS))
    from graphdef.ops import REGISTRY
    for name, spec in written.items():
        size = (ROOT / name / "model.pb").stat().st_size
        missing = sorted(op for op in spec["ops"] if op not in REGISTRY)
        print(f"{name}: {size} bytes, {sum(spec['ops'].values())} nodes; "
              + ", ".join(f"{op} {count}" for op, count in spec["ops"].items()))
        if missing:
            print(f"  not in graphdef's registry: {', '.join(missing)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
