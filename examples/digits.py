"""An MLP classifier for handwritten digits, trained in the graph, frozen, run everywhere.

    python examples/digits.py OUT_DIR

The data set is scikit-learn's 8x8 digits (1,797 images, shipped inside the package). The
model is 64-128-64-10 with ReLU, trained with Adam on softmax cross-entropy with a progress
bar; it writes OUT_DIR/digits_curves.png (loss and accuracy per epoch), the frozen model
OUT_DIR/digits.pb (input "images" [?, 64], outputs "probabilities" and "classes"), and
OUT_DIR/digits_sample.npy (the first test images) for graphrun and build/graphrun-cc.
"""

import os
import sys

import matplotlib
import numpy as np
from sklearn.datasets import load_digits
from tqdm import tqdm

import graphdef as tf
from graphdef import graph_util

matplotlib.use("Agg")  # no screen needed
import matplotlib.pyplot as plt  # noqa: E402

EPOCHS, BATCH = 60, 64
out_dir = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(out_dir, exist_ok=True)

digits = load_digits()
images = (digits.data / 16.0).astype(np.float32)
labels = digits.target.astype(np.int32)
order = np.random.default_rng(0).permutation(len(images))
test, train = order[:360], order[360:]

graph = tf.Graph()
with graph.as_default():
    tf.set_random_seed(0)
    x = tf.placeholder(tf.float32, [None, 64], name="images")
    y = tf.placeholder(tf.int32, [None], name="labels")
    hidden = x
    for i, width in enumerate((128, 64)):
        w = tf.get_variable(f"w{i}", [hidden.shape[1], width])
        b = tf.get_variable(f"b{i}", [width], initializer=tf.zeros_initializer())
        hidden = tf.nn.relu(tf.matmul(hidden, w) + b)
    w = tf.get_variable("w_out", [64, 10])
    b = tf.get_variable("b_out", [10], initializer=tf.zeros_initializer())
    logits = tf.add(tf.matmul(hidden, w), b, name="logits")
    tf.nn.softmax(logits, name="probabilities")
    classes = tf.argmax(logits, 1, output_type=tf.int32, name="classes")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(classes, y), tf.float32))
    step = tf.train.AdamOptimizer(0.003).minimize(loss)
    init = tf.global_variables_initializer()

history = {"loss": [], "train accuracy": [], "test accuracy": []}
shuffle = np.random.default_rng(1)
with tf.Session(graph=graph) as sess:
    sess.run(init)
    bar = tqdm(range(EPOCHS), desc="training", unit="epoch", disable=None)
    for _ in bar:
        batch_order = shuffle.permutation(train)
        for start in range(0, len(batch_order), BATCH):
            batch = batch_order[start:start + BATCH]
            sess.run(step, {x: images[batch], y: labels[batch]})
        epoch_loss, train_acc = sess.run([loss, accuracy], {x: images[train], y: labels[train]})
        test_acc = sess.run(accuracy, {x: images[test], y: labels[test]})
        for key, value in zip(history, (epoch_loss, train_acc, test_acc)):
            history[key].append(float(value))
        bar.set_postfix(loss=f"{epoch_loss:.3f}", test=f"{test_acc:.3f}")
    frozen = graph_util.freeze(sess, ["probabilities", "classes"], graph=graph)

with open(os.path.join(out_dir, "digits.pb"), "wb") as f:
    f.write(frozen.SerializeToString(deterministic=True))
np.save(os.path.join(out_dir, "digits_sample.npy"), images[test[:8]])

figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
left.plot(history["loss"])
left.set(title="training loss", xlabel="epoch", ylabel="cross-entropy")
right.plot(history["train accuracy"], label="train")
right.plot(history["test accuracy"], label="test")
right.set(title="accuracy", xlabel="epoch", ylim=(0.8, 1.01))
right.legend()
figure.tight_layout()
figure.savefig(os.path.join(out_dir, "digits_curves.png"), dpi=80)

print(f"test accuracy {history['test accuracy'][-1]:.4f} on {len(test)} held-out images")
print(f"true classes of digits_sample.npy: {labels[test[:8]].tolist()}")
