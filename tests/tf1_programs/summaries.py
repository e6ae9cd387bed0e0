"""Training curves for TensorBoard: tf.summary.scalar, merge_all, FileWriter with the graph, read back."""

import os
import tempfile

import numpy as np
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator


def main(tf):
    rng = np.random.RandomState(2)
    features = rng.normal(size=(40, 3)).astype(np.float32)
    targets = features @ np.array([[0.5], [-1.0], [2.0]], np.float32) + 0.3

    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w = tf.Variable(tf.zeros([3, 1]), name="w")
    b = tf.Variable(tf.zeros([1]), name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y), name="loss")
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.name_scope("metrics"):
        tf.summary.scalar("loss", loss)
        tf.summary.scalar("bias", tf.reduce_sum(b))
    weight_norm = tf.summary.scalar("weight_norm", tf.sqrt(tf.reduce_sum(tf.square(w))))
    merged = tf.summary.merge_all()
    only_norm = tf.summary.merge([weight_norm])

    with tempfile.TemporaryDirectory() as logdir:
        with tf.Session() as sess:
            writer = tf.summary.FileWriter(os.path.join(logdir, "train"), sess.graph)
            sess.run(tf.global_variables_initializer())
            for step in range(1, 31):
                sess.run(train, {x: features, y: targets})
                if step % 10 == 0:
                    # a run of its own: fetched with `train`, the weight reads could see the weights
                    # before or after the update (TensorFlow does not order them)
                    writer.add_summary(sess.run(merged, {x: features, y: targets}), step)
            writer.add_summary(sess.run(only_norm), 100)
            writer.flush()
            writer.close()

        events = EventAccumulator(os.path.join(logdir, "train"))
        events.Reload()
        tags = events.Tags()
        print("graph:", tags["graph"], "scalars:", sorted(tags["scalars"]))
        for tag in sorted(tags["scalars"]):
            print(tag, ["%d: %.4f" % (e.step, e.value) for e in events.Scalars(tag)])
        nodes = {node.name for node in events.Graph().node}
        print("graph has loss, w, x:", {"loss", "w", "x"} <= nodes)
