"""A two-layer MLP: get_variable with constant initializers, name scopes, momentum, a global step."""

import numpy as np


def main(tf):
    rng = np.random.RandomState(3)
    features = rng.normal(size=(120, 5)).astype(np.float32)
    labels = (features[:, 0] * features[:, 1] > 0).astype(np.int32) + (features[:, 2] > 1).astype(np.int32)

    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 5], name="x")
        y = tf.placeholder(tf.int32, [None], name="y")
        w1 = tf.get_variable("w1", [5, 16], initializer=tf.constant_initializer(
            rng.normal(0, 0.5, (5, 16)).astype(np.float32)))
        b1 = tf.get_variable("b1", [16], initializer=tf.zeros_initializer())
        w2 = tf.get_variable("w2", [16, 3], initializer=tf.constant_initializer(
            rng.normal(0, 0.5, (16, 3)).astype(np.float32)))
        b2 = tf.get_variable("b2", [3], initializer=tf.zeros_initializer())
        with tf.name_scope("hidden"):
            hidden = tf.nn.relu(tf.matmul(x, w1) + b1)
        with tf.name_scope("output"):
            logits = tf.matmul(hidden, w2) + b2
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        global_step = tf.Variable(0, trainable=False, name="global_step")
        train_op = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss, global_step=global_step)
        predictions = tf.argmax(logits, axis=1, output_type=tf.int32)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(predictions, y), tf.float32))
        init = tf.global_variables_initializer()
        print("trainable:", [v.name for v in tf.trainable_variables()])
        print("logits:", logits.name, logits.get_shape().as_list(), "train:", train_op.type)
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        feed = {x: features, y: labels}
        for _ in range(60):
            _, loss_value = sess.run([train_op, loss], feed_dict=feed)
            step = sess.run(global_step)  # read after the step: fetched with it, the order is unspecified
            if step % 15 == 0:
                print("step %3d loss %.4f accuracy %.3f" % (step, loss_value, sess.run(accuracy, feed)))
        print("final step:", sess.run(global_step))
        print("predictions:", sess.run(predictions, {x: features[:10]}))
        print("labels:     ", labels[:10])
