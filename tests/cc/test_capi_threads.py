"""libgraphrun's threads (runner/capi/graphrun_c.h, "Threads"): runs of separately loaded models go ahead at once
and give the answers each gives alone, and the Session's within the numerics policy; runs of one model take
turns; a model's OpenMP thread count is set before its first run, and a wrong one is refused in one line.
"""

import ctypes
import statistics
import threading
import time

import numpy as np
import pytest

import graphdef as tf
from graphdef._native import capi as libgraphrun
from graphdef.serving.runtime import CcRuntime
from tests.support import serve_helpers
from tests.support.numerics_policy import assert_all_conform
from tests.cc.test_libgraphrun import TF_MODELS, lib  # noqa: F401 (the fixture)

# (model, input, fetch) of two of TensorFlow's models: oneDNN convolutions and matrix products, and
# graphrun-cc's own pooling, softmax and element-wise kernels
MODELS = [("cnn", "image", "probs"), ("keras_cnn", "image", "Identity")]


def feeds_for(model, name, count, seed):
    """`count` batches of 1 to 4 images of the model's input shape: new batch sizes make new plans and new
    oneDNN primitives while the other thread runs."""
    shape = model.inputs[0][2][1:]
    rng = np.random.default_rng(seed)
    return [{name: rng.random([1 + k % 4] + shape, dtype=np.float32)} for k in range(count)]


def run_at_once(work, count):
    """work(k) on `count` threads started together; the exceptions they raised."""
    failures, start = [], threading.Barrier(count)

    def body(k):
        try:
            start.wait()
            work(k)
        except Exception as e:  # noqa: BLE001 - collected and reported by the test
            failures.append(e)

    threads = [threading.Thread(target=body, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failures


@pytest.mark.parametrize("threads", [1, 0])
@pytest.mark.parametrize("name,input_name,fetch", MODELS)
def test_two_loads_run_at_once_give_what_each_gives_alone(lib, name, input_name, fetch, threads):  # noqa: F811
    path = TF_MODELS / name / "model.pb"
    models = [libgraphrun.CcModel(path, threads=threads) for _ in range(2)]
    feeds = [feeds_for(models[0], input_name, 12, seed) for seed in (1, 2)]
    # each load alone, then against the Session on the numpy engine
    alone = [[models[k].run(f, [fetch])[0] for f in feeds[k]] for k in range(2)]
    for k in range(2):
        for f, value in zip(feeds[k][:4], alone[k]):
            want = serve_helpers.session_answer(path, f, fetch + ":0")
            assert_all_conform([value], [want], path, [fetch + ":0"], who="libgraphrun and the Session")
    answers = {}

    def work(k):
        for repeat in range(8):
            for i, f in enumerate(feeds[k]):
                answers[(k, repeat, i)] = models[k].run(f, [fetch])[0]

    assert run_at_once(work, 2) == []
    assert len(answers) == 2 * 8 * 12
    for (k, _, i), value in answers.items():
        np.testing.assert_array_equal(value, alone[k][i])


def test_runs_of_one_load_from_many_threads_take_turns(lib):  # noqa: F811
    """Its plans and kernels' state are the model's own: eight threads on one load, on one OpenMP thread, give
    the serial answers."""
    path = TF_MODELS / "keras_cnn" / "model.pb"
    model = libgraphrun.CcModel(path, threads=1)
    feeds = feeds_for(model, "image", 8, 3)
    serial = [model.run(f, ["Identity"])[0] for f in feeds]
    answers = {}

    def work(k):
        for repeat in range(6):
            answers[(k, repeat)] = model.run(feeds[k], ["Identity"])[0]

    assert run_at_once(work, 8) == []
    for (k, _), value in answers.items():
        np.testing.assert_array_equal(value, serial[k])


def slow_square(n=768, repeats=8):
    """x [n, n] -> y: `repeats` n x n matrix products in a row, long enough to run beside another model."""
    x = tf.placeholder(tf.float32, [n, n], name="x")
    y = x
    for _ in range(repeats):
        y = tf.matmul(y, x) * np.float32(1.0 / n)
    tf.identity(y, name="y")


def test_a_run_of_one_model_does_not_wait_for_a_run_of_another(lib, tmp_path):  # noqa: F811
    """While one thread runs a slow model back to back, a small model's runs on another thread take their own
    time, not a share of the slow one's (as they did while one lock served the whole process)."""
    slow = libgraphrun.CcModel(serve_helpers.write_model(tmp_path / "slow.pb", slow_square), threads=1)
    small = libgraphrun.CcModel(TF_MODELS / "mlp" / "model.pb", threads=1)
    square = {"x": np.eye(768, dtype=np.float32)}
    row = {small.inputs[0][0]: np.ones([1] + small.inputs[0][2][1:], np.float32)}
    small_fetch = [small.outputs[0][0]]
    small.run(row, small_fetch)
    started, stop, slow_times = threading.Event(), threading.Event(), []

    def keep_busy():
        while not stop.is_set():
            begin = time.perf_counter()
            slow.run(square, ["y"])
            slow_times.append(time.perf_counter() - begin)
            started.set()

    busy = threading.Thread(target=keep_busy)
    busy.start()
    try:
        assert started.wait(120)
        small_times = []
        for _ in range(10):
            time.sleep(0.013)  # to come in at another point of a slow run each time
            begin = time.perf_counter()
            small.run(row, small_fetch)
            small_times.append(time.perf_counter() - begin)
    finally:
        stop.set()
        busy.join()
    # waiting for the slow run would cost half of one on average
    assert statistics.median(small_times) < min(slow_times) / 4, (small_times, slow_times)


def set_threads(model, count):
    lib_ = libgraphrun.load_library()
    error = ctypes.c_void_p()
    status = lib_.graphrun_model_set_threads(model._handle if model else None, count, ctypes.byref(error))
    message = ctypes.cast(error, ctypes.c_char_p).value.decode() if error.value else ""
    if error.value:
        lib_.graphrun_free_string(error)
    return status, message


def test_the_thread_count_is_set_before_the_first_run(lib):  # noqa: F811
    path = TF_MODELS / "cnn" / "model.pb"
    image = np.load(TF_MODELS / "cnn" / "feed_image.npy")
    model = libgraphrun.CcModel(path)
    assert set_threads(model, 2) == (libgraphrun.OK, "")
    assert set_threads(model, 1) == (libgraphrun.OK, "")
    value = model.run({"image": image}, ["probs"])[0]
    assert set_threads(model, 1) == (libgraphrun.OK, "")  # the count it has: nothing changes
    status, message = set_threads(model, 2)
    assert status == libgraphrun.USAGE
    assert message == ("the thread count must be set before the model's first run (its kernels are prepared for "
                       "1 thread; load the model again for another count)")
    np.testing.assert_array_equal(model.run({"image": image}, ["probs"])[0], value)
    status, message = set_threads(libgraphrun.CcModel(path), -1)
    assert (status, message) == (libgraphrun.USAGE, "a thread count must be 0 (OpenMP's default) or more, not -1")
    assert set_threads(None, 1) == (libgraphrun.USAGE, "graphrun_model_set_threads: no model (model is NULL)")


def test_the_runtime_runs_as_many_batches_at_once_as_it_has_loads(lib):  # noqa: F811
    """CcRuntime(instances=2): two runs from two threads each take a load of their own, and the answers are
    those of a run alone."""
    path = TF_MODELS / "cnn" / "model.pb"
    runtime = CcRuntime(path, instances=2, threads=1)
    assert len(runtime.models) == 2 and runtime.models[0] is not runtime.models[1]
    feeds = feeds_for(runtime.models[0], "image", 6, 4)
    alone = [runtime.run(f, ["probs"])[0] for f in feeds]
    answers = {}

    def work(k):
        for repeat in range(10):
            for i, f in enumerate(feeds):
                answers[(k, repeat, i)] = runtime.run(f, ["probs"])[0]

    assert run_at_once(work, 4) == []
    for (_, _, i), value in answers.items():
        np.testing.assert_array_equal(value, alone[i])
    assert runtime._idle.qsize() == 2  # every load is back
