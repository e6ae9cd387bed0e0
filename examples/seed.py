"""The program from the seed article, built with graphdef, run with a Session and saved.

    python examples/seed.py build/demo/seed.pb

The saved file is a TensorFlow GraphDef: graphrun, build/graphrun-cc, TensorFlow and
Netron all open it.
"""

import sys

import graphdef as tf

path = sys.argv[1] if len(sys.argv) > 1 else "seed.pb"

with tf.Session() as sess:
    a = tf.constant(15, name="a")
    b = tf.constant(5, name="b")
    prod = tf.multiply(a, b, name="Multiply")
    total = tf.add(a, b, name="Add")
    res = tf.divide(prod, total, name="Divide")
    print("Session.run:", sess.run(res))

tf.save(tf.get_default_graph(), path)
print("saved", path)
