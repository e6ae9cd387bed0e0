"""Softmax regression with a hand-written cross-entropy, mini-batches and an accuracy op."""

import numpy as np


def make_data(rng, n):
    centers = np.array([[2, 0, 0, 1], [0, 2, 1, 0], [-1, -1, 2, 2]], np.float32)
    labels = rng.randint(0, 3, n)
    features = centers[labels] + rng.normal(0, 1.0, (n, 4)).astype(np.float32)
    return features.astype(np.float32), np.eye(3, dtype=np.float32)[labels]


def main(tf):
    rng = np.random.RandomState(1)
    train_x, train_y = make_data(rng, 300)
    test_x, test_y = make_data(rng, 100)
    learning_rate, epochs, batch_size = 0.1, 15, 50

    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 3])
    W = tf.Variable(tf.zeros([4, 3]))
    b = tf.Variable(tf.zeros([3]))
    pred = tf.nn.softmax(tf.matmul(x, W) + b)
    cost = tf.reduce_mean(-tf.reduce_sum(y * tf.log(pred), reduction_indices=1))
    optimizer = tf.train.GradientDescentOptimizer(learning_rate).minimize(cost)
    correct_prediction = tf.equal(tf.argmax(pred, 1), tf.argmax(y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
    init = tf.global_variables_initializer()

    print("pred", pred.get_shape().as_list(), "accuracy", accuracy.get_shape().as_list())
    with tf.Session() as sess:
        sess.run(init)
        for epoch in range(epochs):
            avg_cost = 0.0
            total_batch = len(train_x) // batch_size
            for i in range(total_batch):
                batch = slice(i * batch_size, (i + 1) * batch_size)
                _, c = sess.run([optimizer, cost], feed_dict={x: train_x[batch], y: train_y[batch]})
                avg_cost += c / total_batch
            if (epoch + 1) % 3 == 0:
                print("Epoch: %04d cost= %.5f" % (epoch + 1, avg_cost))
        print("Optimization Finished!")
        print("Accuracy: %.4f" % accuracy.eval({x: test_x, y: test_y}))
        print("W:", [["%.3f" % v for v in row] for row in sess.run(W)])
