"""Checkpoints: save during training, find the latest, restore into a new session and continue."""

import os
import tempfile

import numpy as np


def main(tf):
    data = np.linspace(-1, 1, 20, dtype=np.float32).reshape(-1, 1)
    target = 3.0 * data - 1.0

    x = tf.placeholder(tf.float32, [None, 1])
    y = tf.placeholder(tf.float32, [None, 1])
    w = tf.Variable([[0.0]], name="w")
    b = tf.Variable([0.0], name="b")
    loss = tf.losses.mean_squared_error(y, tf.matmul(x, w) + b)
    train = tf.train.GradientDescentOptimizer(0.2).minimize(loss)
    saver = tf.train.Saver(max_to_keep=2)

    with tempfile.TemporaryDirectory() as directory:
        prefix = os.path.join(directory, "model.ckpt")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(1, 31):
                sess.run(train, {x: data, y: target})
                if step % 10 == 0:
                    path = saver.save(sess, prefix, global_step=step)
                    print("saved", os.path.basename(path), "loss %.5f" % sess.run(loss, {x: data, y: target}))
            trained = sess.run([w, b])
        latest = tf.train.latest_checkpoint(directory)
        print("latest:", os.path.basename(latest))

        with tf.Session() as sess:
            saver.restore(sess, latest)
            restored = sess.run([w, b])
            print("restored equal:", all(np.array_equal(r, t) for r, t in zip(restored, trained)))
            print("w %.4f b %.4f" % (restored[0][0, 0], restored[1][0]))
            for _ in range(20):
                sess.run(train, {x: data, y: target})
            print("continued: loss %.6f" % sess.run(loss, {x: data, y: target}))

        with tf.Session() as sess:
            saver.restore(sess, os.path.join(directory, "model.ckpt-20"))
            print("step 20 w %.4f" % sess.run(w)[0, 0])
