"""Linear regression by per-sample gradient descent: the classic first TF1 tutorial."""

import numpy as np


def main(tf):
    train_x = np.asarray([3.3, 4.4, 5.5, 6.71, 6.93, 4.168, 9.779, 6.182, 7.59, 2.167,
                          7.042, 10.791, 5.313, 7.997, 5.654, 9.27, 3.1])
    train_y = np.asarray([1.7, 2.76, 2.09, 3.19, 1.694, 1.573, 3.366, 2.596, 2.53, 1.221,
                          2.827, 3.465, 1.65, 2.904, 2.42, 2.94, 1.3])
    n_samples = train_x.shape[0]
    rng = np.random.RandomState(7)

    X = tf.placeholder("float")
    Y = tf.placeholder("float")
    W = tf.Variable(rng.randn(), name="weight")
    b = tf.Variable(rng.randn(), name="bias")
    pred = tf.add(tf.multiply(X, W), b)
    cost = tf.reduce_sum(tf.pow(pred - Y, 2)) / (2 * n_samples)
    optimizer = tf.train.GradientDescentOptimizer(0.01).minimize(cost)
    init = tf.global_variables_initializer()

    print("W:", W.name, "pred:", pred.name, pred.dtype.name)
    with tf.Session() as sess:
        sess.run(init)
        for epoch in range(1, 21):
            for (x, y) in zip(train_x, train_y):
                sess.run(optimizer, feed_dict={X: x, Y: y})
            if epoch % 5 == 0:
                c = sess.run(cost, feed_dict={X: train_x, Y: train_y})
                print("Epoch: %04d cost= %.5f W= %.4f b= %.4f" % (epoch, c, sess.run(W), sess.run(b)))
        print("Optimization Finished!")
        training_cost = sess.run(cost, feed_dict={X: train_x, Y: train_y})
        print("Training cost= %.5f W= %.4f b= %.4f" % (training_cost, sess.run(W), sess.run(b)))
        test_x = np.asarray([6.83, 4.668, 8.9, 7.91, 5.7, 8.7, 3.1, 2.1])
        test_y = np.asarray([1.84, 2.273, 3.2, 2.831, 2.92, 3.24, 1.35, 1.03])
        testing_cost = sess.run(tf.reduce_sum(tf.pow(pred - Y, 2)) / (2 * test_x.shape[0]),
                                feed_dict={X: test_x, Y: test_y})
        print("Testing cost= %.5f" % testing_cost)
        print("Absolute mean square loss difference: %.5f" % abs(training_cost - testing_cost))
