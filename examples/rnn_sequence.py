"""A recurrent network trained inside the graph: tf.while_loop over the time steps, its
gradient a second loop running them backwards, plain gradient descent on the weights.

    python examples/rnn_sequence.py [OUT_DIR]

The task needs memory: read T numbers, one per step, and predict their discounted sum
x_0 + x_1/2 + x_2/4 + ... (the first number counts most, so the network must keep it).
The cell is h = tanh(x_t W + h U + b), the prediction h_T V + c, the loss the mean squared
error. It prints the loss as it falls and saves the training graph as OUT_DIR/rnn_train.pb,
which TensorFlow imports and runs as well (the test trains the same program in TF1).
"""

import os
import sys

import numpy as np

T, BATCH, HIDDEN = 6, 32, 8


def make_data(seed, batches):
    """`batches` pairs of x [T, BATCH, 1] and y [BATCH, 1] (float32)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (batches, T, BATCH, 1)).astype(np.float32)
    weights = 0.5 ** np.arange(T)
    y = np.einsum("btni,t->bni", x.astype(np.float64), weights).astype(np.float32)
    return list(zip(x, y))


def initial_weights(seed):
    rng = np.random.default_rng(seed)
    return {"W": rng.normal(0, 0.5, (1, HIDDEN)), "U": rng.normal(0, 0.3, (HIDDEN, HIDDEN)),
            "b": np.zeros(HIDDEN), "V": rng.normal(0, 0.3, (HIDDEN, 1)), "c": np.zeros(1)}


def build(tf, weights, learning_rate=0.1):
    """The training graph, with `tf` either graphdef or tf.compat.v1; returns (x, y, loss, train, init)."""
    x = tf.placeholder(tf.float32, [T, BATCH, 1], name="x")
    y = tf.placeholder(tf.float32, [BATCH, 1], name="y")
    v = {name: tf.Variable(value.astype(np.float32), name=name) for name, value in weights.items()}

    def step(t, h):
        x_t = tf.gather(x, t)
        return t + 1, tf.tanh(tf.matmul(x_t, v["W"]) + tf.matmul(h, v["U"]) + v["b"])

    _, h = tf.while_loop(lambda t, h: t < T, step, [tf.constant(0), tf.zeros([BATCH, HIDDEN])])
    prediction = tf.add(tf.matmul(h, v["V"]), v["c"], name="prediction")
    loss = tf.reduce_mean(tf.square(prediction - y), name="loss")
    train = tf.train.GradientDescentOptimizer(learning_rate).minimize(loss, name="train")
    return x, y, loss, train, tf.global_variables_initializer()


def train(tf, session_factory, steps, seed=0):
    """Trains the program in `tf` for `steps` batches; returns the loss before each step."""
    graph = tf.Graph()
    with graph.as_default():
        x, y, loss, train_op, init = build(tf, initial_weights(seed))
    data = make_data(seed, steps)
    losses = []
    with session_factory(graph) as sess:
        sess.run(init)
        for xs, ys in data:
            value, _ = sess.run([loss, train_op], {x: xs, y: ys})
            losses.append(float(value))
    return graph, losses


def main():
    import graphdef
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out_dir, exist_ok=True)
    graph, losses = train(graphdef, lambda g: graphdef.Session(graph=g), steps=300)
    for i in range(0, len(losses), 50):
        print(f"step {i:3d}  loss {np.mean(losses[i:i + 50]):.4f}")
    path = graphdef.save(graph, os.path.join(out_dir, "rnn_train.pb"))
    print(f"training graph: {path}")


if __name__ == "__main__":
    main()
