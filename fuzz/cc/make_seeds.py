"""Writes the C++ reader targets' seeds into fuzz/seeds/, made by TensorFlow (run once, by hand, where
TensorFlow is installed; the seeds are committed so that fuzzing needs no TensorFlow):

  *.savedmodel  saved_model.pb, variables.index and variables.data-00000-of-00001 as sections
                (fuzz/cc/sections.h): TF1 SavedModels with reference and resource variables, a TF2
                tf.Module export, and a TF1 .meta file with its checkpoint packed as a SavedModel
  *.pbtxt       text GraphDefs written by tf.io.write_graph: a while loop, a function library
  *.sidecar     fuzz/seeds/external_weights.pb with its weights file, as sections

    .venv/bin/python fuzz/cc/make_seeds.py
"""

import os
import struct
import sys
import tempfile

import numpy as np

SEEDS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "seeds")


def sections(*parts):
    return b"".join(struct.pack("<I", len(part)) + part for part in parts)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(name, data):
    with open(os.path.join(SEEDS, name), "wb") as f:
        f.write(data)
    print(name, len(data))


def pack_saved_model(export):
    var = os.path.join(export, "variables")
    index = os.path.join(var, "variables.index")
    shard = os.path.join(var, "variables.data-00000-of-00001")
    return sections(read(os.path.join(export, "saved_model.pb")),
                    read(index) if os.path.exists(index) else b"",
                    read(shard) if os.path.exists(shard) else b"")


def tf1_saved_model(tf, export, use_resource):
    tf1 = tf.compat.v1
    with tf1.Graph().as_default(), tf1.Session() as sess:
        x = tf1.placeholder(tf.float32, [None, 3], name="x")
        w = tf1.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="dense/w", use_resource=use_resource)
        b = tf1.Variable(np.ones(2, np.float32), name="dense/b", use_resource=use_resource)
        y = tf1.nn.relu(tf1.matmul(x, w) + b, name="y")
        sess.run(tf1.global_variables_initializer())
        tf1.saved_model.simple_save(sess, export, {"x": x}, {"y": y})


def tf2_saved_model(tf, export):
    class Scale(tf.Module):
        def __init__(self):
            self.w = tf.Variable(np.arange(4, dtype=np.float32).reshape(2, 2), name="w")
            self.b = tf.Variable(np.float32(0.5), name="b")

        @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32, name="x")])
        def __call__(self, x):
            return {"y": tf.matmul(x, self.w) + self.b}

    module = Scale()
    tf.saved_model.save(module, export, signatures=module.__call__)


def meta_as_saved_model(tf, work):
    """A TF1 Saver's .meta and checkpoint, as the SavedModel a user would make of them."""
    from graphdef._proto import meta_graph_pb2

    tf1 = tf.compat.v1
    prefix = os.path.join(work, "ckpt", "model")
    with tf1.Graph().as_default(), tf1.Session() as sess:
        x = tf1.placeholder(tf.float32, [None, 2], name="x")
        v = tf1.Variable(np.float32([[1, 2], [3, 4]]), name="v")
        tf1.identity(tf1.tanh(tf1.matmul(x, v)), name="y")
        sess.run(tf1.global_variables_initializer())
        tf1.train.Saver().save(sess, prefix)
    meta = meta_graph_pb2.MetaGraphDef()
    meta.ParseFromString(read(prefix + ".meta"))
    meta.meta_info_def.tags[:] = ["serve"]
    signature = meta.signature_def["serving_default"]
    signature.inputs["x"].name = "x:0"
    signature.inputs["x"].dtype = 1
    signature.outputs["y"].name = "y:0"
    signature.outputs["y"].dtype = 1
    model = meta_graph_pb2.SavedModel(saved_model_schema_version=1)
    model.meta_graphs.add().CopyFrom(meta)
    return sections(model.SerializeToString(), read(prefix + ".index"), read(prefix + ".data-00000-of-00001"))


def pbtxt_seeds(tf, work):
    tf1 = tf.compat.v1
    with tf1.Graph().as_default() as graph:
        n = tf1.placeholder(tf.int32, [], name="n")
        x = tf1.placeholder(tf.float32, [None, 2], name="x")
        _, y = tf1.while_loop(lambda i, acc: i < n, lambda i, acc: (i + 1, acc * 2.0 + 1.0), [0, x])
        tf1.identity(y, name="out")
        tf.io.write_graph(graph.as_graph_def(), work, "while.pbtxt", as_text=True)
    write("tf1_while_loop.pbtxt", read(os.path.join(work, "while.pbtxt")))

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def f(x):
        return tf.nn.softmax(tf.reduce_sum(x * 2.0, axis=1, keepdims=True) + x)

    tf.io.write_graph(f.get_concrete_function().graph.as_graph_def(), work, "function.pbtxt", as_text=True)
    write("tf2_function.pbtxt", read(os.path.join(work, "function.pbtxt")))


def main():
    import tensorflow as tf

    with tempfile.TemporaryDirectory() as work:
        for use_resource in (False, True):
            export = os.path.join(work, f"tf1_{use_resource}")
            tf1_saved_model(tf, export, use_resource)
            write(f"tf1_{'resource' if use_resource else 'ref'}_variables.savedmodel", pack_saved_model(export))
        export = os.path.join(work, "tf2")
        tf2_saved_model(tf, export)
        write("tf2_module.savedmodel", pack_saved_model(export))
        write("tf1_meta_checkpoint.savedmodel", meta_as_saved_model(tf, work))
        pbtxt_seeds(tf, work)
    write("external_weights.sidecar", sections(read(os.path.join(SEEDS, "external_weights.pb")),
                                               read(os.path.join(SEEDS, "external_weights.weights"))))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    main()
