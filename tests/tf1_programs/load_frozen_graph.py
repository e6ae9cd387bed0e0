"""Reading a frozen .pb the way TF1 code does: tf.gfile.GFile and tf.GraphDef, then import_graph_def."""

import os
import tempfile

import numpy as np


def main(tf):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        tf.identity(tf.matmul(x, tf.constant(np.eye(3, dtype=np.float32) * 2.0)) + 1.0, name="y")

    with tempfile.TemporaryDirectory() as directory:
        tf.train.write_graph(graph.as_graph_def(), directory, "model.pb", as_text=False)
        with tf.gfile.GFile(os.path.join(directory, "model.pb"), "rb") as f:
            graph_def = tf.GraphDef()
            graph_def.ParseFromString(f.read())
    print("nodes:", [node.name for node in graph_def.node])

    with tf.Graph().as_default() as loaded:
        tf.import_graph_def(graph_def, name="")
        inputs = loaded.get_tensor_by_name("x:0")
        outputs = loaded.get_tensor_by_name("y:0")
    with tf.Session(graph=loaded) as sess:
        print("y:", sess.run(outputs, {inputs: [[1.0, 2.0, 3.0]]}).tolist())
