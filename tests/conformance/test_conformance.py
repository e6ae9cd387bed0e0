"""Every runtime replays every committed conformance case (tests/conformance/cases/).

The replays read only the committed files, never the table, so a runtime is judged on
exactly what is in the repository. A separate test keeps the files equal to what the
table generates now.
"""

import numpy as np
import pytest

import graphdef
from graphdef._proto import graph_pb2
from graphdef.framework.numerics import Tolerance, combined
from graphdef.ops import REGISTRY
from graphdef.ops.cc_pending import cc_pending
from graphdef.ops.registry import numerics_of
from graphdef.wire.serialize import load
from tests.support.cc_helpers import listed_kernels, run_cc
from tests.conformance import generate, replay
from tests.support.graphrun_helpers import run_graphrun

CASE_DIRS = replay.case_dirs()

# Known bugs, one line per (runtime, case): the test is a strict xfail, so it fails as
# soon as the bug is fixed, and then its line here must go.
KNOWN_BUGS = {
}


def cases_for(runtime):
    params = []
    for directory in CASE_DIRS:
        bug = KNOWN_BUGS.get((runtime, directory.name))
        marks = [pytest.mark.xfail(strict=True, reason=bug)] if bug else []
        params.append(pytest.param(directory, id=directory.name, marks=marks))
    return params


def load_case(directory, runtime):
    case = replay.load(directory)
    reason = case.skip.get(runtime)
    if reason:
        pytest.skip(f"{runtime} skips {case.name}: {reason}")
    return case


def test_there_are_cases():
    assert len(CASE_DIRS) >= 50, f"only {len(CASE_DIRS)} conformance cases in {replay.CASES_DIR}"


@pytest.mark.slow
def test_committed_files_match_the_table():
    problems = generate.differences()
    assert not problems, ("the committed conformance files differ from what tests/conformance/table/ "
                          f"generates; regenerate with `{generate.REGENERATE}` and commit:\n  "
                          + "\n  ".join(problems[:30]))


# -- (a) the Python Session ---------------------------------------------------------------

@pytest.mark.parametrize("directory", cases_for("python"))
def test_python_session(directory):
    case = load_case(directory, "python")
    graph = load(case.model)
    with graphdef.Session(graph=graph) as sess:
        values = sess.run(case.fetches, feed_dict={f"{name}:0": v for name, v in case.feeds.items()})
    replay.check_outputs("Python Session", case, [np.asarray(v) for v in values])


# -- (b) graphrun and (c) the C++ runner, through the CLI contract they share --------------

def graphrun_stdout(case, json_output):
    code, out, err = run_graphrun(*replay.cli_args(case, json_output))
    assert code == 0, f"graphrun on {case.name} exited {code}: {err.strip()}"
    return out


def cc_stdout(runner, case, json_output):
    code, out, err = run_cc(runner, *replay.cli_args(case, json_output))
    assert code == 0, f"graphrun-cc on {case.name} exited {code}: {err.strip()}"
    return out


@pytest.mark.parametrize("directory", cases_for("graphrun"))
def test_graphrun(directory):
    case = load_case(directory, "graphrun")
    stdout = graphrun_stdout(case, json_output=True)
    replay.check_outputs("graphrun", case, replay.parse_json_outputs("graphrun", case, stdout))


@pytest.mark.parametrize("directory", cases_for("graphrun-cc"))
def test_cc_runner(directory, cc_runner):
    case = load_case(directory, "graphrun-cc")
    stdout = cc_stdout(cc_runner, case, json_output=True)
    replay.check_outputs("graphrun-cc", case, replay.parse_json_outputs("graphrun-cc", case, stdout))


def exact_cases():
    return [p for p in cases_for("text") if replay.load(p.values[0]).exact]


@pytest.mark.parametrize("directory", exact_cases())
def test_text_output_is_identical(directory, cc_runner):
    """Where the answer is exact, graphrun and graphrun-cc must print the same bytes."""
    case = load_case(directory, "text")
    for runtime in ("graphrun", "graphrun-cc"):  # a runtime that skips a case has no text to compare
        if case.skip.get(runtime):
            pytest.skip(f"{runtime} skips {case.name}: {case.skip[runtime]}")
    if any((runtime, case.name) in KNOWN_BUGS for runtime in ("graphrun", "graphrun-cc")):
        pytest.skip("a runtime has a known bug on this case (see KNOWN_BUGS); its output is judged there")
    python_text = graphrun_stdout(case, json_output=False)
    cc_text = cc_stdout(cc_runner, case, json_output=False)
    assert cc_text == python_text, (f"{case.name}: text output differs\n"
                                    f"graphrun:    {python_text!r}\ngraphrun-cc: {cc_text!r}")


# -- registry completeness ------------------------------------------------------------------

def ops_in_cases():
    found = set()
    for directory in CASE_DIRS:
        graph_def = graph_pb2.GraphDef.FromString((directory / "model.pb").read_bytes())
        found.update(node.op for node in graph_def.node)
    return found


def _string_ops_awaiting_cases():
    """The string ops: their cases come with graphrun-cc's string tensors (issue 34); until then
    tests/python/strings checks each against TensorFlow in the Python runtimes."""
    return {op for op in cc_pending() if REGISTRY[op].module.startswith("graphdef.ops.strings")}


def test_every_registered_op_is_in_a_case():
    missing = sorted(set(REGISTRY) - ops_in_cases() - _string_ops_awaiting_cases())
    assert not missing, f"ops in graphdef.ops.REGISTRY with no conformance case: {', '.join(missing)}"


def test_every_registered_op_has_a_cc_kernel(cc_runner):
    """Every one but those graphdef.ops.cc_pending lists, which graphrun-cc must not have yet."""
    kernels, pending = listed_kernels(cc_runner), cc_pending()
    missing = sorted(set(REGISTRY) - kernels - pending)
    assert not missing, f"ops in graphdef.ops.REGISTRY with no C++ kernel: {', '.join(missing)}"
    landed = sorted(pending & kernels)
    assert not landed, f"ops with a C++ kernel still listed in graphdef.ops.cc_pending: {', '.join(landed)}"


# -- training across runtimes ---------------------------------------------------------------
# A training graph built with graphdef's API, its data in an .npz, and the weights numpy
# computes for N steps. Each runtime trains with the CLI's training contract,
#   MODEL --run init --run train --steps N --feeds data.npz --fetch ... --json
# and must print those weights: bit for bit where every operation rounds alike in numpy
# and the runtimes (elementwise ops, sums of fewer than 8 terms, sqrt), closely otherwise.

TRAINING_ENGINES = [
    pytest.param("graphrun-cc", id="graphrun-cc"),
    pytest.param("graphrun", id="graphrun"),
]

F = np.float32


def _regression_data():
    """4 rows of 3 features (fewer than 8, so every sum in the graph adds left to right)."""
    rng = np.random.default_rng(11)
    x = rng.normal(size=(4, 3)).astype(F)
    return {"x": x, "y": (x @ np.array([1.5, -2.0, 0.5], F) + F(0.75)).astype(F)}


def _build_regression(tf, optimizer):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None], name="y")
    w = tf.Variable(np.zeros(3, F), name="w")
    b = tf.Variable(F(0), name="b")
    loss = tf.reduce_mean(tf.square(tf.reduce_sum(x * w, axis=1) + b - y))
    optimizer.minimize(loss, name="train")


def _regression_gradients(data, w, b):
    """The gradient graph's float32 arithmetic, operation by operation."""
    x, y = data["x"], data["y"]
    g = F(1) / F(len(y)) * (F(2) * ((x * w).sum(axis=1) + b - y))
    return (x * g[:, None]).sum(axis=0), g.sum()


def _numpy_gradient_descent(data, steps, lr=F(0.2)):  # noqa: B008 (numpy scalars are immutable)
    w, b = np.zeros(3, F), F(0)
    for _ in range(steps):
        gw, gb = _regression_gradients(data, w, b)
        w, b = w - lr * gw, b - lr * gb
    return {"w:0": w, "b:0": b}


def _numpy_nesterov_momentum(data, steps, lr=F(0.02), momentum=F(0.9)):  # noqa: B008
    w, b, aw, ab = np.zeros(3, F), F(0), np.zeros(3, F), F(0)
    for _ in range(steps):
        gw, gb = _regression_gradients(data, w, b)
        aw, ab = aw * momentum + gw, ab * momentum + gb
        w = w - (gw * lr + aw * momentum * lr)
        b = b - (gb * lr + ab * momentum * lr)
    return {"w:0": w, "b:0": b}


def _numpy_adam(data, steps, lr=F(0.05), beta1=F(0.9), beta2=F(0.999), epsilon=F(1e-8)):  # noqa: B008
    params = {"w:0": np.zeros(3, F), "b:0": F(0)}
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(p) for k, p in params.items()}
    beta1_power, beta2_power = beta1, beta2  # TF1's Adam keeps these as variables
    for _ in range(steps):
        grads = dict(zip(params, _regression_gradients(data, params["w:0"], params["b:0"])))
        lr_t = lr * np.sqrt(F(1) - beta2_power) / (F(1) - beta1_power)
        for k, g in grads.items():
            m[k] = beta1 * m[k] + (F(1) - beta1) * g
            v[k] = beta2 * v[k] + (F(1) - beta2) * g * g
            params[k] = params[k] - lr_t * m[k] / (np.sqrt(v[k]) + epsilon)
        beta1_power, beta2_power = beta1_power * beta1, beta2_power * beta2
    return params


def _classifier_data():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(32, 4)).astype(F)
    labels = np.argmax(x @ rng.normal(size=(4, 3)), axis=1).astype(np.int32)
    return {"x": x, "labels": labels}


def _build_classifier(tf, optimizer):
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    labels = tf.placeholder(tf.int32, [None], name="labels")
    w = tf.Variable(np.zeros((4, 3), F), name="w")
    b = tf.Variable(np.zeros(3, F), name="b")
    logits = tf.matmul(x, w) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    optimizer.minimize(loss, name="train")


def _numpy_softmax_classifier(data, steps, lr=0.5):
    """Float64 gradient descent on the mean cross-entropy: d/dlogits = (softmax - onehot) / N."""
    x, labels = data["x"].astype(np.float64), data["labels"]
    w, b = np.zeros((4, 3)), np.zeros(3)
    lr = float(F(lr))
    for _ in range(steps):
        logits = x @ w + b
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        p[np.arange(len(labels)), labels] -= 1
        g = p / len(labels)
        w, b = w - lr * (x.T @ g), b - lr * g.sum(axis=0)
    return {"w:0": w.astype(F), "b:0": b.astype(F)}


TRAINING_CASES = {
    # name: (build, optimizer, data, steps, numpy weights, exact)
    "linear_gradient_descent": (_build_regression, lambda tf: tf.train.GradientDescentOptimizer(0.2),
                                _regression_data, 100, _numpy_gradient_descent, True),
    "linear_nesterov_momentum": (_build_regression, lambda tf: tf.train.MomentumOptimizer(0.02, 0.9, use_nesterov=True),
                                 _regression_data, 100, _numpy_nesterov_momentum, True),
    "linear_adam": (_build_regression, lambda tf: tf.train.AdamOptimizer(0.05),
                    _regression_data, 100, _numpy_adam, True),
    "softmax_classifier_gradient_descent": (_build_classifier, lambda tf: tf.train.GradientDescentOptimizer(0.5),
                                            _classifier_data, 50, _numpy_softmax_classifier, False),
}


def _train(engine, request, args):
    """stdout of one runtime given the training arguments."""
    if engine == "graphrun":
        code, out, err = run_graphrun(*args)
    else:
        code, out, err = run_cc(request.getfixturevalue("cc_runner"), *args)
    assert code == 0, f"{engine} exited {code}: {err.strip()}"
    return out


@pytest.mark.parametrize("engine", TRAINING_ENGINES)
@pytest.mark.parametrize("name", sorted(TRAINING_CASES))
def test_training(name, engine, request, tmp_path):
    build, optimizer, make_data, steps, numpy_weights, exact = TRAINING_CASES[name]
    graph = graphdef.Graph()
    with graph.as_default():
        build(graphdef, optimizer(graphdef))
        graphdef.global_variables_initializer()
    graphdef.save(graph, str(tmp_path / "model.pb"))
    data = make_data()
    np.savez(tmp_path / "data.npz", **data)
    fetches = ["w:0", "b:0"]
    stdout = _train(engine, request, [str(tmp_path / "model.pb"), "--run", "init", "--run", "train",
                                      "--steps", str(steps), "--feeds", str(tmp_path / "data.npz"),
                                      *[a for f in fetches for a in ("--fetch", f)], "--json"])
    expected = numpy_weights(data, steps)
    # exact where numpy repeats the graph's arithmetic operation for operation; otherwise
    # the policy of one training step's ops, once per step
    step = numerics_of(graph.as_graph_def(), "train")
    tolerance = Tolerance() if exact else combined([step] * steps).tolerance(np.float32)
    case = replay.CaseFiles(name=name, directory=tmp_path, description=f"{steps} training steps", feeds=data,
                            feed_files={}, fetches=fetches, expected=[expected[f] for f in fetches],
                            tolerances=[tolerance] * len(fetches), skip={})
    replay.check_outputs(engine, case, replay.parse_json_outputs(engine, case, stdout))
