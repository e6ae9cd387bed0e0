"""run_fuzz.py's "meta" surface: `.meta` files (MetaGraphDef) through tf.train.import_meta_graph.

Seeds are the .meta files graphdef's Saver writes (and TensorFlow's when it is importable).
Mutations go at the graph (graph_mutations, as the graphdef surface), the SaverDef (restore op,
filename tensor), the collections (huge lists, nonsense kinds) and the raw bytes. Each case
imports the file into a fresh graph and, when that works, restores the Saver it returns from a
checkpoint that is not there (the error path every restore shares).
"""

import os

import numpy as np
from execute import Hang, classify_exception
from file_cases import cached_seeds, mutate_one_file, pack, unpack, write_tree
from graph_mutations import mutate as mutate_graph

from graphdef._proto import meta_graph_pb2

NAMES = ["", "^save/restore_all", "save/Const:0", "save/restore_all", "x:9", "nosuch", "save/Const:-1", "\x00"]


def _graphdef_meta(folder):
    import graphdef as gd
    graph = gd.Graph()
    with graph.as_default():
        x = gd.placeholder(gd.float32, [None, 3], name="x")
        w = gd.Variable(np.ones((3, 2), np.float32), name="w")
        gd.nn.relu(gd.matmul(x, w), name="y")
        init = gd.global_variables_initializer()
        saver = gd.train.Saver()
    with gd.Session(graph=graph) as sess:
        sess.run(init)
        saver.save(sess, os.path.join(folder, "model"))
    with open(os.path.join(folder, "model.meta"), "rb") as f:
        return pack({"model.meta": f.read()})


def _tensorflow_meta(folder):
    import tensorflow
    tf1 = tensorflow.compat.v1
    with tf1.Graph().as_default(), tf1.Session() as sess:
        x = tf1.placeholder(tensorflow.float32, [None, 3], name="x")
        w = tf1.Variable(np.ones((3, 2), np.float32), name="w")
        tf1.nn.relu(tf1.matmul(x, w), name="y")
        sess.run(tf1.global_variables_initializer())
        tf1.train.Saver().save(sess, os.path.join(folder, "tf"))
    with open(os.path.join(folder, "tf.meta"), "rb") as f:
        return pack({"model.meta": f.read()})


def _make(folder):
    os.makedirs(folder, exist_ok=True)
    made = [_graphdef_meta(folder)]
    try:
        made.append(_tensorflow_meta(folder))
    except ImportError:
        pass
    return made


def seeds(cache):
    return cached_seeds(cache, _make)


def _collections(rng, meta):
    key = rng.choice(["variables", "trainable_variables", "train_op", "summaries", "\xff", "a" * 200])
    collection = meta.collection_def[key]
    count = rng.choice([1, 10, 1000, 100000])
    what = rng.randrange(3)
    if what == 0:
        collection.node_list.value.extend([rng.choice(NAMES)] * count)
    elif what == 1:
        collection.bytes_list.value.extend([b"\x0a\x03abc"] * count)
    else:
        collection.int64_list.value.extend([(1 << 63) - 1] * count)


def mutate_case(rng, blob):
    files = unpack(blob)
    if "model.meta" not in files or rng.random() < 0.15:
        return pack(mutate_one_file(rng, files))
    meta = meta_graph_pb2.MetaGraphDef()
    try:
        meta.ParseFromString(files["model.meta"])
    except Exception:  # noqa: BLE001 - bytes an earlier mutation broke: mutate them further
        return pack(mutate_one_file(rng, files))
    what = rng.random()
    if what < 0.5:
        mutate_graph(meta.graph_def, rng)
    elif what < 0.75:
        meta.saver_def.restore_op_name = rng.choice(NAMES)
        meta.saver_def.filename_tensor_name = rng.choice(NAMES)
    else:
        _collections(rng, meta)
    files["model.meta"] = meta.SerializeToString(deterministic=True)
    return pack(files)


def run_case(blob, workdir, rng):
    import graphdef as gd
    folder = write_tree(workdir, unpack(blob))
    try:
        graph = gd.Graph()
        with graph.as_default():
            saver = gd.train.import_meta_graph(os.path.join(folder, "model.meta"))
            if saver is not None:
                with gd.Session(graph=graph) as sess:
                    saver.restore(sess, os.path.join(folder, "absent"))
    except (Hang, Exception) as exc:  # noqa: BLE001 - classifying every exception is the point
        return classify_exception(exc)
    return "ok", ""
