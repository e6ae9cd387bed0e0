"""Variable names under name scopes: tf.Variable takes the name scope, tf.get_variable ignores it."""


def main(tf):
    with tf.name_scope("block"):
        made = tf.Variable(tf.zeros([2]), name="made")
        got = tf.get_variable("got", [2], initializer=tf.zeros_initializer())
        total = tf.add(made, got, name="total")
    print("Variable:", made.name)
    print("get_variable:", got.name)
    print("op:", total.name)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        print("value:", sess.run(total).tolist())
