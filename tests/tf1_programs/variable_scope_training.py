"""TF1 training idioms: variable_scope reuse, a global step, a decaying learning rate, clipped gradients."""

import numpy as np


def dense(tf, x, units, name, activation=None):
    with tf.variable_scope(name, reuse=tf.AUTO_REUSE):
        w = tf.get_variable("kernel", [int(x.get_shape()[-1]), units], initializer=tf.constant_initializer(0.1))
        b = tf.get_variable("bias", [units], initializer=tf.zeros_initializer())
    y = tf.matmul(x, w) + b
    return activation(y) if activation else y


def main(tf):
    rng = np.random.RandomState(11)
    features = rng.normal(size=(50, 3)).astype(np.float32)
    targets = features @ np.array([[1.0], [-2.0], [0.5]], np.float32)

    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.float32, [None, 1])
    prediction = dense(tf, dense(tf, x, 4, "hidden", tf.nn.relu), 1, "out")
    again = dense(tf, x, 4, "hidden")           # the same variables, reused
    loss = tf.reduce_mean(tf.square(prediction - y))
    global_step = tf.train.get_or_create_global_step()
    rate = tf.train.exponential_decay(0.1, global_step, decay_steps=10, decay_rate=0.5, staircase=True)
    optimizer = tf.train.GradientDescentOptimizer(rate)
    clipped = [(tf.clip_by_value(g, -1.0, 1.0), v) for g, v in optimizer.compute_gradients(loss)]
    train = optimizer.apply_gradients(clipped, global_step=global_step)

    print("variables:", [v.name for v in tf.global_variables()])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(30):
            sess.run(train, {x: features, y: targets})
        print("step %d rate %.4f loss %.4f" % (sess.run(global_step), sess.run(rate),
                                               sess.run(loss, {x: features, y: targets})))
        print("reused:", again.get_shape().as_list())
