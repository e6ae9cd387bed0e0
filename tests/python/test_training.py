"""Learning inside the graph: optimizers against their update rules written in numpy, against
TensorFlow running the same TF1 script, and TensorFlow running our saved training graphs."""

import os

import numpy as np
import pytest

import graphdef as tf

TARGET = np.array([3.0, -4.0, 0.5])
START = np.array([1.0, 2.0, -1.0])


def _quadratic(optimizer, steps):
    """Minimise sum((w - TARGET)^2) from START; returns w after each step."""
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(START, name="w")
        loss = tf.reduce_sum(tf.square(w - TARGET))
        train = optimizer().minimize(loss)
        init = tf.global_variables_initializer()
    path = []
    with tf.Session(graph=g) as sess:
        sess.run(init)
        for _ in range(steps):
            sess.run(train)
            path.append(sess.run(w))
    return np.array(path)


def _numpy_path(update, steps):
    w, state, path = START.copy(), {}, []
    for t in range(1, steps + 1):
        w = update(w, 2 * (w - TARGET), state, t)
        path.append(w.copy())
    return np.array(path)


def _sgd(w, g, state, t):
    return w - 0.1 * g


def _momentum(nesterov):
    def update(w, g, state, t):
        accum = state.get("accum", 0) * 0.9 + g
        state["accum"] = accum
        return w - (0.05 * g + 0.05 * 0.9 * accum if nesterov else 0.05 * accum)
    return update


def _adam(w, g, state, t):
    lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-8
    m = b1 * state.get("m", 0) + (1 - b1) * g
    v = b2 * state.get("v", 0) + (1 - b2) * g * g
    state["m"], state["v"] = m, v
    return w - lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m / (np.sqrt(v) + eps)


@pytest.mark.parametrize("make, rule", [
    (lambda: tf.train.GradientDescentOptimizer(0.1), _sgd),
    (lambda: tf.train.MomentumOptimizer(0.05, 0.9), _momentum(False)),
    (lambda: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True), _momentum(True)),
    (lambda: tf.train.AdamOptimizer(0.1), _adam),
], ids=["sgd", "momentum", "nesterov", "adam"])
def test_optimizer_follows_its_update_rule(make, rule):
    np.testing.assert_allclose(_quadratic(make, 25), _numpy_path(rule, 25), rtol=1e-12, atol=1e-12)


def test_global_step_counts_steps():
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(1.0, name="w")
        step = tf.Variable(0, trainable=False, name="global_step")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.square(w), global_step=step)
        init = tf.global_variables_initializer()
        assert step not in tf.trainable_variables() and w in tf.trainable_variables()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        for _ in range(3):
            sess.run(train)
        assert sess.run(step) == 3


def test_initializers_are_seeded_constants():
    def draw():
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(7)
            w = tf.get_variable("w", [400, 100])
            t = tf.truncated_normal([10000], stddev=0.5)
            init = tf.global_variables_initializer()
            assert {op.type for op in g.get_operations()} <= {"Const", "VariableV2", "Assign", "Identity", "NoOp"}
        with tf.Session(graph=g) as sess:
            sess.run(init)
            return sess.run([w, t])
    (w, t), (w2, t2) = draw(), draw()
    np.testing.assert_array_equal(w, w2)
    np.testing.assert_array_equal(t, t2)
    limit = np.sqrt(6 / (400 + 100))
    assert np.abs(w).max() <= limit and np.abs(w).max() > 0.95 * limit
    assert np.abs(t).max() <= 1.0 and abs(t.std() - 0.44) < 0.02  # two-sigma truncation shrinks the spread


# -- TensorFlow as the oracle ---------------------------------------------------------------------

def tf1_program(tf, make_optimizer):
    """A TF1 training program that touches nothing but `tf`: run with TensorFlow and with graphdef."""
    np.random.seed(0)
    x_data = np.random.uniform(0, 20, (64, 1)).astype(np.float32)
    y_data = np.concatenate([4 * x_data + 70, -x_data], axis=1) + np.random.normal(0, 1, (64, 2)).astype(np.float32)
    labels_data = (x_data[:, 0] > 10).astype(np.int32)

    x = tf.placeholder(tf.float32, [None, 1], name="x")
    y = tf.placeholder(tf.float32, [None, 2], name="y")
    labels = tf.placeholder(tf.int32, [None], name="labels")
    w1 = tf.Variable(np.full((1, 8), 0.1, np.float32), name="w1")
    b1 = tf.Variable(np.linspace(-1, 1, 8).astype(np.float32), name="b1")
    w2 = tf.Variable(np.linspace(-0.5, 0.5, 16).reshape(8, 2).astype(np.float32), name="w2")
    b2 = tf.Variable(np.zeros(2, np.float32), name="b2")
    hidden = tf.nn.relu(tf.matmul(x / 20.0, w1) + b1)
    out = tf.matmul(hidden, w2) + b2
    regression = tf.losses.mean_squared_error(y / 100.0, out)
    classification = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=out))
    loss = regression + classification + 1e-3 * tf.nn.l2_loss(w2)
    train = make_optimizer(tf).minimize(loss)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(out, 1, output_type=tf.int32), labels), tf.float32))

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(60):
            sess.run(train, feed_dict={x: x_data, y: y_data, labels: labels_data})
        return sess.run([w1, b1, w2, b2, loss, accuracy], {x: x_data, y: y_data, labels: labels_data})


OPTIMIZERS = {
    "sgd": lambda tf: tf.train.GradientDescentOptimizer(0.1),
    "momentum": lambda tf: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
    "adam": lambda tf: tf.train.AdamOptimizer(0.01),
}


@pytest.fixture(scope="module")
def tf1():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    tensorflow = pytest.importorskip("tensorflow", reason="TensorFlow is the oracle here; make test installs it")
    # graph mode comes from each test's Graph context: disabling eager execution would hold for every
    # later test in the process (TensorFlow cannot turn it back on)
    return tensorflow.compat.v1


@pytest.mark.slow
@pytest.mark.tf_oracle
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_a_tf1_training_script_learns_the_same_weights(tf1, name):
    with tf1.Graph().as_default():
        theirs = tf1_program(tf1, OPTIMIZERS[name])
    tf.reset_default_graph()
    ours = tf1_program(tf, OPTIMIZERS[name])
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_tensorflow_runs_our_training_graph_to_the_same_weights(tf1, name):
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(START.astype(np.float32), name="w")
        x = tf.placeholder(tf.float32, [3], name="x")
        loss = tf.reduce_sum(tf.square(w * x - TARGET.astype(np.float32)))
        train = OPTIMIZERS[name](tf).minimize(loss)
        init = tf.global_variables_initializer()
    feed = np.array([1.0, 0.5, 2.0], np.float32)
    with tf.Session(graph=g) as sess:
        sess.run(init)
        for _ in range(20):
            sess.run(train, {x: feed})
        ours = sess.run(w)
    theirs_graph = tf1.Graph()
    with theirs_graph.as_default():
        tf1.import_graph_def(tf1.GraphDef.FromString(g.as_graph_def().SerializeToString()), name="")
    with tf1.Session(graph=theirs_graph) as sess:
        sess.run(init.name)
        for _ in range(20):
            sess.run(train.name, {"x:0": feed})
        theirs = sess.run("w:0")
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def _ops_run_by(op):
    """Every op `op` waits for, through data and control edges."""
    seen, stack = set(), [op]
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(t.op for t in node.inputs)
            stack.extend(node.control_inputs)
    return seen


def test_gated_step_waits_only_for_gradients_it_uses():
    """GATE_OP releases a MatMul's two input gradients together; the fed batch's one leads to no
    variable, so the step neither waits for it nor computes it (a third of a small MLP's backward
    products), and the weights come out bit for bit as without the gate."""
    rng = np.random.default_rng(7)
    w0 = rng.normal(size=(6, 4)).astype(np.float32)
    xv, yv = rng.normal(size=(5, 6)).astype(np.float32), rng.normal(size=(5, 4)).astype(np.float32)
    weights = {}
    for gate in (tf.train.Optimizer.GATE_NONE, tf.train.Optimizer.GATE_OP):
        g = tf.Graph()
        with g.as_default():
            x = tf.placeholder(tf.float32, [None, 6], name="x")
            w = tf.Variable(w0, name="w")
            product = tf.matmul(x, w, name="product")
            loss = tf.reduce_mean(tf.square(product - yv))
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, gate_gradients=gate)
            init = tf.global_variables_initializer()
        ran = {op.name for op in _ops_run_by(train)}
        assert "gradients/product_grad/MatMul_1" in ran       # x^T g: w's gradient
        assert "gradients/product_grad/MatMul" not in ran     # g w^T: the fed batch's
        with tf.Session(graph=g) as sess:
            sess.run(init)
            sess.run(train, {x: xv})
            weights[gate] = sess.run(w)
    # two layers: the second MatMul's gate still waits for the hidden activation's gradient,
    # which reads w2 and leads on to w1: w2's update must not run before it
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 6], name="x")
        hidden = tf.matmul(x, tf.Variable(w0, name="w1"), name="hidden")
        out = tf.matmul(hidden, tf.Variable(np.ones((4, 2), np.float32), name="w2"), name="out")
        tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(out))
    gate = g.get_operation_by_name("gradients/out_grad/tuple/group_deps")
    assert {op.name for op in gate.control_inputs} == {"gradients/out_grad/MatMul", "gradients/out_grad/MatMul_1"}
    gate = g.get_operation_by_name("gradients/hidden_grad/tuple/group_deps")
    assert {op.name for op in gate.control_inputs} == {"gradients/hidden_grad/MatMul_1"}
    expected = w0 - 0.1 * (xv.T.astype(np.float64) @ (2 * (xv.astype(np.float64) @ w0 - yv) / yv.size))
    np.testing.assert_array_equal(weights[tf.train.Optimizer.GATE_OP], weights[tf.train.Optimizer.GATE_NONE])
    np.testing.assert_allclose(weights[tf.train.Optimizer.GATE_OP], expected, rtol=1e-5, atol=1e-6)
