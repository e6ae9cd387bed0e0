"""libgraphrun.so (runner/capi/graphrun_c.h) through the package's one binding of it, graphdef/_native/capi.py.

TensorFlow's own models (tests/tf_models) give TensorFlow's recorded answers within each case's tolerance,
and the Session's within the numerics policy; the metadata is TensorFlow's; bad calls and bad models
get one line and a status, never a crash; concurrent runs from threads give the answers serial runs give.
"""

import ctypes
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import graphdef
from graphdef._native import capi as libgraphrun
from graphdef.serving.runtime import CcRuntime, SessionRuntime
from graphdef.wire.serialize import load
from tests.support import serve_helpers
from tests.conformance import replay
from tests.support.numerics_policy import assert_all_conform

REPO = Path(__file__).resolve().parents[2]
TF_MODELS = REPO / "tests" / "tf_models"
CASES = sorted(p.name for p in TF_MODELS.iterdir() if (p / "case.json").is_file())
MLP = REPO / "tests" / "models" / "mlp.pb"
CNN = TF_MODELS / "cnn"


@pytest.fixture(scope="module")
def lib():
    """The library, built with `make cc` when missing; a failed build fails, never skips."""
    serve_helpers.ensure_library()
    return libgraphrun.load_library()


def case_of(name):
    return replay.load(TF_MODELS / name)


@pytest.mark.parametrize("name", CASES)
def test_tensorflow_models_give_tensorflows_answers(lib, name):
    """Every fetch of the case (intermediate tensors too: loaded without optimizing) within its tolerance."""
    case = case_of(name)
    model = libgraphrun.CcModel(case.model, optimize=False)
    values = model.run(case.feeds, case.fetches)
    replay.check_outputs("libgraphrun", case, values)


@pytest.mark.parametrize("name", CASES)
def test_optimized_models_give_tensorflows_answers_for_their_outputs(lib, name):
    """Optimized at load, as graphrun serve runs them: the outputs among the case's fetches."""
    case = case_of(name)
    model = libgraphrun.CcModel(case.model)
    outputs = {n if ":" in n else n + ":0" for n, *_ in model.outputs}
    kept = [k for k, fetch in enumerate(case.fetches) if fetch in outputs]
    assert kept, f"{name}: none of the case's fetches {case.fetches} is an output of the model {sorted(outputs)}"
    values = model.run(case.feeds, [case.fetches[k] for k in kept])
    partial = replay.CaseFiles(name=case.name, directory=case.directory, description=case.description,
                               feeds=case.feeds, feed_files=case.feed_files, fetches=[case.fetches[k] for k in kept],
                               expected=[case.expected[k] for k in kept],
                               tolerances=[case.tolerances[k] for k in kept], skip=case.skip)
    replay.check_outputs("libgraphrun (optimized)", partial, values)


def test_the_session_and_the_library_agree_within_the_numerics_policy(lib):
    batch = np.random.default_rng(5).standard_normal((7, 16)).astype(np.float32)
    fetch = "output/score:0"
    cc = libgraphrun.CcModel(MLP).run({"x": batch}, [fetch])
    python = serve_helpers.session_answer(MLP, {"x": batch}, fetch)
    assert cc[0].shape == (7, 1) and cc[0].dtype == np.float32
    assert_all_conform(cc, [python], MLP, [fetch], who="libgraphrun and the Session")


@pytest.mark.tf_oracle
def test_the_metadata_is_tensorflows(lib):
    """Inputs and outputs as TensorFlow's own graph import describes them."""
    import tensorflow as tf

    model = libgraphrun.CcModel(CNN / "model.pb")
    graph_def = tf.compat.v1.GraphDef.FromString((CNN / "model.pb").read_bytes())
    with tf.Graph().as_default() as graph:
        tf.compat.v1.import_graph_def(graph_def, name="")
    placeholders = [op for op in graph.get_operations() if op.type == "Placeholder"]
    assert [(n, d, s, r) for n, d, s, r in model.inputs] == [
        (op.name, np.dtype(op.outputs[0].dtype.as_numpy_dtype), op.outputs[0].shape.as_list(), True)
        for op in placeholders]
    consumed = {t.op.name for op in graph.get_operations() for t in op.inputs}
    leaves = [op for op in graph.get_operations() if op.name not in consumed and op.outputs]
    assert [(n, d) for n, d, _, _ in model.outputs] == [(op.name, np.dtype(op.outputs[0].dtype.as_numpy_dtype))
                                                      for op in leaves]
    shape = model.outputs[0][2]
    assert shape == [None, 10], "the static shape rules should see [batch, classes] through the CNN"
    assert model.optimize_summary.startswith("optimize:")


def test_a_placeholder_with_default_takes_its_default_unless_fed(lib, tmp_path):
    path = serve_helpers.write_model(tmp_path / "pwd.pb", lambda: graphdef.multiply(
        graphdef.placeholder_with_default(np.float32([1, 2, 3]), [None], name="x"), np.float32(2), name="y"))
    model = libgraphrun.CcModel(path)
    assert [(n, r) for n, _, _, r in model.inputs] == [("x", False)]
    np.testing.assert_array_equal(model.run({}, ["y"])[0], np.float32([2, 4, 6]))
    np.testing.assert_array_equal(model.run({"x": np.float32([5])}, ["y"])[0], np.float32([10]))


def test_inputs_are_read_in_place_and_outputs_are_the_callers(lib, tmp_path):
    """A fed input comes back as an output: the output is a copy, and the input is never written."""
    path = serve_helpers.write_model(tmp_path / "echo.pb", lambda: graphdef.identity(
        graphdef.placeholder(graphdef.float32, [None, 3], name="x"), name="y"))
    model = libgraphrun.CcModel(path, optimize=False)
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    y, = model.run({"x": x}, ["y"])
    assert not np.shares_memory(x, y)
    y[:] = -1
    np.testing.assert_array_equal(x, np.arange(12, dtype=np.float32).reshape(4, 3))
    # a strided view is made contiguous first
    z, = model.run({"x": x[::2]}, ["y"])
    np.testing.assert_array_equal(z, x[::2])


def test_weights_fed_at_run_time_are_read_afresh_each_run(lib, tmp_path):
    """A model keeps each oneDNN primitive and its arguments between runs: a filter or right-hand matrix fed
    as an input must still be the one of this run (a plain and a depthwise convolution, a matrix product),
    and a constant's kept copy must not leak into a fed run of the same shapes."""
    def build():
        x = graphdef.placeholder(graphdef.float32, [1, 6, 6, 8], name="x")
        w = graphdef.placeholder(graphdef.float32, [3, 3, 8, 16], name="w")
        d = graphdef.placeholder(graphdef.float32, [3, 3, 8, 1], name="d")
        b = graphdef.placeholder(graphdef.float32, [8, 5], name="b")
        graphdef.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", name="conv")
        graphdef.nn.depthwise_conv2d_native(x, d, [1, 1, 1, 1], "VALID", name="depthwise")
        graphdef.matmul(graphdef.reshape(x, [36, 8]), b, name="product")
    path = serve_helpers.write_model(tmp_path / "fed_weights.pb", build)
    model = libgraphrun.CcModel(path)
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (1, 6, 6, 8)).astype(np.float32)
    x64 = x.astype(np.float64)
    padded = np.pad(x64, ((0, 0), (1, 1), (1, 1), (0, 0)))
    fetches = ["conv", "depthwise", "product"]
    for _ in range(3):
        w, d, b = (rng.uniform(-1, 1, shape).astype(np.float32) for shape in ([3, 3, 8, 16], [3, 3, 8, 1], [8, 5]))
        conv = sum(np.einsum("nhwc,co->nhwo", padded[:, i:i + 6, j:j + 6], w[i, j].astype(np.float64))
                   for i in range(3) for j in range(3))
        depthwise = sum(x64[:, i:i + 4, j:j + 4] * d[i, j, :, 0].astype(np.float64) for i in range(3) for j in range(3))
        product = x64.reshape(36, 8) @ b.astype(np.float64)
        actual = model.run({"x": x, "w": w, "d": d, "b": b}, fetches)
        expected = [v.astype(np.float32) for v in (conv, depthwise, product)]
        assert_all_conform(actual, expected, path, fetches, who="graphrun-cc and float64")


# -- bad calls and bad models: one line and a status, never a crash --------------------------------------------

def refused(call):
    with pytest.raises(libgraphrun.GraphrunError) as caught:
        call()
    message = str(caught.value)
    assert message and "\n" not in message
    return caught.value.code, message


def test_a_missing_or_damaged_model_file(lib, tmp_path):
    code, message = refused(lambda: libgraphrun.CcModel(tmp_path / "nothing.pb"))
    assert code == libgraphrun.MODEL and "nothing.pb" in message
    garbage = tmp_path / "garbage.pb"
    garbage.write_bytes(b"\xff\xfe not a graph \x00" * 10)
    code, message = refused(lambda: libgraphrun.CcModel(garbage))
    assert code == libgraphrun.MODEL and "garbage.pb" in message


def test_a_missing_op_is_refused_at_load_naming_it(lib):
    code, message = refused(lambda: libgraphrun.CcModel(REPO / "tests" / "models" / "unsupported.pbtxt"))
    assert code == libgraphrun.UNSUPPORTED
    assert "TRTEngineOp" in message and "ZeroOut" in message


def test_bad_feeds_and_fetches_name_what_is_wrong(lib):
    model = libgraphrun.CcModel(MLP)
    good = np.zeros((2, 16), np.float32)
    code, message = refused(lambda: model.run({"nope": good}, ["output/score"]))
    assert code == libgraphrun.USAGE and "unknown input 'nope'" in message and "x (float32, [?,16])" in message
    code, message = refused(lambda: model.run({"x": good.astype(np.float64)}, ["output/score"]))
    assert code == libgraphrun.USAGE and "input 'x'" in message and "float64" in message and "float32" in message
    code, message = refused(lambda: model.run({"x": np.zeros((2, 15), np.float32)}, ["output/score"]))
    assert code == libgraphrun.USAGE and "[2,15]" in message and "[?,16]" in message
    code, message = refused(lambda: model.run({}, ["output/score"]))
    assert code == libgraphrun.USAGE and "not given: x" in message
    code, message = refused(lambda: model.run({"x": good}, ["output/nothing"]))
    assert code == libgraphrun.USAGE and "unknown output 'output/nothing'" in message and "output/score" in message
    code, message = refused(lambda: model.run({"x": good, "x:0": good}, ["output/score"]))
    assert code == libgraphrun.USAGE and "more than once" in message
    # a shape whose size overflows is refused before anything is allocated or read
    dims = (ctypes.c_int64 * 2)(2 ** 62, 16)
    code, message = raw_run(lib, model, dims)
    assert code == libgraphrun.USAGE and "input 'x'" in message


def raw_run(lib, model, dims):
    """graphrun_model_run called directly, with a pointer to 4 bytes for whatever `dims` claims."""
    buffer = ctypes.create_string_buffer(4)
    names = (ctypes.c_char_p * 1)(b"x")
    dtypes = (ctypes.c_char_p * 1)(b"float32")
    ranks = (ctypes.c_int * 1)(2)
    data = (ctypes.c_void_p * 1)(ctypes.addressof(buffer))
    fetches = (ctypes.c_char_p * 1)(b"output/score")
    result, error = ctypes.c_void_p(), ctypes.c_void_p()
    code = lib.graphrun_model_run(model._handle, 1, names, dtypes, ranks, dims, data, 1, fetches,
                                  ctypes.byref(result), ctypes.byref(error))
    message = ctypes.cast(error, ctypes.c_char_p).value.decode() if error.value else ""
    lib.graphrun_free_string(error)
    assert not result.value
    return code, message


def test_null_arguments_are_refused(lib):
    result, error = ctypes.c_void_p(), ctypes.c_void_p()
    code = lib.graphrun_model_run(None, 0, None, None, None, None, None, 0, None, ctypes.byref(result),
                                  ctypes.byref(error))
    assert code == libgraphrun.USAGE and b"no model" in ctypes.cast(error, ctypes.c_char_p).value
    lib.graphrun_free_string(error)
    model, error = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.graphrun_model_load(None, None, 1, ctypes.byref(model), ctypes.byref(error)) == libgraphrun.USAGE
    lib.graphrun_free_string(error)
    assert lib.graphrun_model_num_inputs(None) == -1 and lib.graphrun_model_input_name(None, 0) is None
    lib.graphrun_free_model(None)
    lib.graphrun_free_result(None)


def test_a_failing_kernel_is_a_run_error(lib, tmp_path):
    def build():
        params = graphdef.constant(np.float32([1, 2, 3]))
        graphdef.gather(params, graphdef.placeholder(graphdef.int32, [None], name="i"), name="y")
    model = libgraphrun.CcModel(serve_helpers.write_model(tmp_path / "gather.pb", build))
    np.testing.assert_array_equal(model.run({"i": np.int32([2, 0])}, ["y"])[0], np.float32([3, 1]))
    code, message = refused(lambda: model.run({"i": np.int32([7])}, ["y"]))
    assert code == libgraphrun.RUN and "'y'" in message


def test_a_missing_library_is_named(tmp_path):
    env = {**os.environ, "GRAPHDEF_LIBGRAPHRUN": str(tmp_path / "nowhere.so"), "PYTHONPATH": str(REPO)}
    script = ("from graphdef._native import capi as libgraphrun\n"
              "try:\n    libgraphrun.load_library()\n"
              "except libgraphrun.LibraryMissing as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, cwd=REPO, check=False)
    assert "nowhere.so" in out.stdout and "GRAPHDEF_LIBGRAPHRUN" in out.stdout, out.stderr


@pytest.mark.slow
def test_the_library_runs_in_a_process_that_loaded_tensorflow_first(lib):
    """TensorFlow puts its own protobuf and oneDNN (other versions) in the process's global scope; the
    library must keep using its own (a protobuf call reaching TensorFlow's aborted the process)."""
    script = ("import numpy as np, tensorflow\n"
              "from graphdef._native import capi as libgraphrun\n"
              "model = libgraphrun.CcModel('tests/tf_models/cnn/model.pb')\n"
              "image = np.load('tests/tf_models/cnn/feed_image.npy')\n"
              "print(model.run({'image': image}, ['probs'])[0].shape)\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "TF_CPP_MIN_LOG_LEVEL": "3"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, cwd=REPO,
                         check=False, timeout=300)
    assert out.returncode == 0 and out.stdout.strip().endswith("(4, 10)"), out.stderr[-2000:]


# -- threads ------------------------------------------------------------------------------------------------------

def test_concurrent_runs_from_threads_give_the_serial_answers(lib):
    case = case_of("cnn")
    model = libgraphrun.CcModel(case.model)
    rng = np.random.default_rng(11)
    feeds = [rng.random((1 + k % 4, 28, 28, 1), dtype=np.float32) for k in range(8)]
    serial = [model.run({"image": f}, ["probs"])[0] for f in feeds]
    answers, failures = {}, []

    def work(k):
        try:
            for repeat in range(10):
                answers[(k, repeat)] = model.run({"image": feeds[k]}, ["probs"])[0]
        except Exception as e:  # noqa: BLE001 - collected and reported by the test
            failures.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    for (k, _), value in answers.items():
        np.testing.assert_array_equal(value, serial[k])
    assert len(answers) == 80


# -- the server's runtime --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["cnn", "keras_cnn", "mlp"])
def test_cc_runtime_describes_models_as_the_session_runtime_does(lib, name):
    """Names, dtypes and shapes: those graphrun-cc's shape rules cannot tell (a Keras convolution's output)
    come from graphdef's inference, so the same models batch under both runtimes."""
    cc, python = CcRuntime(TF_MODELS / name / "model.pb"), SessionRuntime(TF_MODELS / name / "model.pb")
    for ours, theirs in ((cc.inputs, python.inputs), (cc.outputs, python.outputs)):
        assert [(s.name, s.tensor_name, s.dtype, s.shape, s.required) for s in ours] == \
               [(s.name, s.tensor_name, s.dtype, s.shape, s.required) for s in theirs]
    assert cc.batchable and python.batchable


def test_cc_runtime_runs_as_the_session_does(lib):
    cc = CcRuntime(CNN / "model.pb")
    image = np.load(CNN / "feed_image.npy")
    with graphdef.Session(graph=load(CNN / "model.pb")) as session:
        want = session.run("probs:0", {"image:0": image})
    assert_all_conform(cc.run({"image": image}, ["probs"]), [want], CNN / "model.pb", ["probs:0"])
    with pytest.raises(graphdef.errors.InvalidArgumentError, match="input 'image'"):
        cc.run({"image": image[:, :5]}, ["probs"])
