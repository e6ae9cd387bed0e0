"""Train, freeze to constants, write the GraphDef, and import it into a fresh graph for inference."""

import os
import tempfile

import numpy as np


def main(tf):
    rng = np.random.RandomState(5)
    inputs = rng.uniform(-1, 1, (64, 2)).astype(np.float32)
    targets = (2.0 * inputs[:, :1] - 3.0 * inputs[:, 1:] + 0.5).astype(np.float32)

    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="input")
        t = tf.placeholder(tf.float32, [None, 1], name="target")
        w = tf.Variable(tf.zeros([2, 1]), name="w")
        b = tf.Variable(tf.zeros([1]), name="b")
        out = tf.add(tf.matmul(x, w), b, name="output")
        loss = tf.reduce_mean(tf.square(out - t))
        train = tf.train.AdamOptimizer(0.1).minimize(loss)
        init = tf.global_variables_initializer()

    with tf.Session(graph=graph) as sess:
        sess.run(init)
        for step in range(1, 151):
            _, value = sess.run([train, loss], {x: inputs, t: targets})
            if step % 50 == 0:
                print("step %d loss %.5f" % (step, value))
        frozen = tf.graph_util.convert_variables_to_constants(sess, graph.as_graph_def(), ["output"])
    print("frozen ops:", sorted(set(node.op for node in frozen.node)))
    print("frozen nodes:", [node.name for node in frozen.node])

    with tempfile.TemporaryDirectory() as directory:
        path = tf.train.write_graph(frozen, directory, "frozen.pb", as_text=False)
        print("wrote", os.path.basename(path), os.path.getsize(path) > 0)

    inference = tf.Graph()
    with inference.as_default():
        new_input = tf.placeholder(tf.float32, [None, 2], name="new_input")
        scaled = new_input * 2.0
        output, = tf.import_graph_def(frozen, input_map={"input:0": scaled}, return_elements=["output:0"],
                                      name="model")
    print("imported:", output.name, output.get_shape().as_list())
    with tf.Session(graph=inference) as sess:
        result = sess.run(output, {new_input: [[0.5, 0.0], [0.0, 0.5], [0.25, -0.25]]})
        print("predictions:", ["%.3f" % v for v in result.ravel()])
        print("by name:", ["%.3f" % v for v in sess.run("model/output:0", {"new_input:0": [[0.1, 0.1]]}).ravel()])
