"""Graph building as TF1 users see it: names, scopes, shapes, control dependencies, fetch structures."""

import collections

import numpy as np


def main(tf):
    a = tf.constant(15, name="a")
    b = tf.constant(5, name="b")
    prod = tf.multiply(a, b, name="Multiply")
    total = tf.add(a, b, name="Add")
    res = tf.divide(prod, total, name="Divide")
    print(res.name, res.dtype.name, res.op.type)

    x = tf.placeholder(tf.float32, shape=[None, 3], name="x")
    with tf.name_scope("layer"):
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) / 10, name="w")
        y = tf.nn.relu(tf.matmul(x, w) - 0.5)
        with tf.name_scope("inner"):
            z = tf.reduce_sum(y, axis=1, keepdims=True)
    same = tf.add(a, b)                       # the name "Add" is taken: Add_1
    print(w.name, y.name, z.name, same.name)
    print(y.get_shape().as_list(), z.get_shape().as_list(), x.get_shape().as_list())

    counter = tf.Variable(0, name="counter")
    increment = tf.assign_add(counter, 1)
    with tf.control_dependencies([increment]):
        after = counter.read_value()            # a read made here waits for the increment
    double = tf.group(tf.assign_add(counter, 1), tf.assign_add(counter, 1), name="double")
    Pair = collections.namedtuple("Pair", ["total", "ratio"])

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        print("res = %.2f" % sess.run(res))
        for _ in range(3):
            print("after:", sess.run(after))
        sess.run(double)
        print("counter:", sess.run(counter))
        feed = {x: [[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]}
        out = sess.run({"y": y, "z": z, "pair": Pair(total, res)}, feed_dict=feed)
        print(sorted(out), type(out["pair"]).__name__, out["pair"].total, "%.2f" % out["pair"].ratio)
        print([["%.3f" % v for v in row] for row in out["y"]], ["%.3f" % v for v in out["z"].ravel()])
        print("by name: %.3f" % sess.run("layer/inner/Sum:0", feed_dict={"x:0": [[1, 1, 1]]})[0, 0])
        w_value, = sess.run([w])
        print(w_value.dtype, w_value.shape)

    sess = tf.InteractiveSession()
    print("eval:", (a * b).eval(), "%.2f" % res.eval())
    sess.close()
