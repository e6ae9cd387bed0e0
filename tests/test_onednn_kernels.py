"""The Python runtime's oneDNN path (graphdef/ops/onednn.py) against float64 numpy written here,
and against the numpy kernels it stands in for (GRAPHDEF_ONEDNN=0), under the ops' numerics policy.

`make test` builds build/onednn, so the library must load here: a missing one fails, not skips."""

import numpy as np
import pytest

import graphdef as tf
from graphdef.ops import kept_buffers, onednn
from graphdef.ops.fused import fused_conv2d, fused_depthwise_conv2d, fused_matmul
from tests.numerics_policy import assert_conforms


needs_trusted_refcounts = pytest.mark.skipif(
    not kept_buffers.REFCOUNTS_TRUSTED,
    reason="CPython 3.14+: nothing is kept or donated until its reference counts are checked (ops/kept_buffers.py)")


@pytest.fixture(autouse=True)
def _onednn_loaded():
    assert onednn.library() is not None, f"oneDNN did not load from {onednn.library_path()} (`make cc` unpacks it)"


def _conv64(x, f, strides, padding, dilations=(1, 1), groups=1):
    """Cross-correlation in float64, TF's SAME padding (the extra row and column at the end)."""
    x, f = x.astype(np.float64), f.astype(np.float64)
    n, h, w, c = x.shape
    kh, kw, ci, co = f.shape
    sh, sw = strides
    dh, dw = dilations
    spans = [(kh - 1) * dh + 1, (kw - 1) * dw + 1]
    if padding == "SAME":
        oh, ow = -(-h // sh), -(-w // sw)
        pad_h, pad_w = max((oh - 1) * sh + spans[0] - h, 0), max((ow - 1) * sw + spans[1] - w, 0)
    else:
        oh, ow = (h - spans[0]) // sh + 1, (w - spans[1]) // sw + 1
        pad_h = pad_w = 0
    xp = np.pad(x, [(0, 0), (pad_h // 2, pad_h - pad_h // 2), (pad_w // 2, pad_w - pad_w // 2), (0, 0)])
    out = np.zeros((n, oh, ow, co))
    cog = co // groups
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, i * dh:i * dh + (oh - 1) * sh + 1:sh, j * dw:j * dw + (ow - 1) * sw + 1:sw, :]
            for g in range(groups):
                out[..., g * cog:(g + 1) * cog] += patch[..., g * ci:(g + 1) * ci] @ f[i, j, :, g * cog:(g + 1) * cog]
    return out


def _depthwise_as_grouped(f):
    kh, kw, c, m = f.shape
    return f.reshape(kh, kw, 1, c * m)


def _activate(y, activation, alpha=0.2):
    if activation == "Relu":
        return np.maximum(y, 0)
    if activation == "Relu6":
        return np.clip(y, 0, 6)
    if activation == "LeakyRelu":
        return np.where(y > 0, y, y * alpha)
    if activation == "Elu":
        return np.where(y < 0, np.expm1(y), y)
    return y


def _run_both(monkeypatch, build, feeds, onednn_serves=True):
    """The fetch with oneDNN switched on and off, with the graph for the policy; checks oneDNN ran
    (unless `onednn_serves` is False: then that it did not) only when switched on."""
    g = tf.Graph()
    with g.as_default():
        out = build()
    calls = []
    real_run = onednn._run
    monkeypatch.setattr(onednn, "_run", lambda *args: calls.append(1) or real_run(*args))
    results = []
    for switch in ("1", "0"):
        monkeypatch.setenv("GRAPHDEF_ONEDNN", switch)
        before = len(calls)
        with tf.Session(graph=g) as sess:
            results.append(sess.run(out, feeds(g)))
        ran = len(calls) - before
        assert bool(ran) == (switch == "1" and onednn_serves), f"GRAPHDEF_ONEDNN={switch}: oneDNN ran {ran}x"
    return g, out.name, results


CONVS = [  # input shape, filter shape, strides, padding, dilations, groups
    ((2, 9, 11, 8), (3, 3, 8, 16), (1, 1), "SAME", (1, 1), 1),
    ((1, 12, 12, 6), (3, 3, 6, 5), (2, 2), "SAME", (1, 1), 1),  # SAME pads only at the end
    ((1, 10, 10, 4), (3, 3, 4, 8), (1, 1), "VALID", (2, 2), 1),
    ((1, 8, 8, 12), (1, 1, 12, 24), (1, 1), "VALID", (1, 1), 1),
    ((1, 7, 7, 8), (3, 3, 2, 12), (1, 1), "SAME", (1, 1), 4),  # grouped
]


@pytest.mark.parametrize("x_shape, f_shape, strides, padding, dilations, groups", CONVS)
@pytest.mark.parametrize("activation", [None, "Relu", "Relu6", "LeakyRelu", "Elu"])
def test_fused_conv2d_matches_float64(monkeypatch, x_shape, f_shape, strides, padding, dilations, groups,
                                      activation):
    rng = np.random.default_rng(7)
    x = rng.normal(size=x_shape).astype(np.float32)
    f = rng.normal(size=f_shape).astype(np.float32)
    b = rng.normal(size=f_shape[3]).astype(np.float32)
    g, name, (by_onednn, by_numpy) = _run_both(monkeypatch, lambda: fused_conv2d(
        tf.placeholder(tf.float32, x_shape, name="x"), tf.constant(f), tf.constant(b), [1, *strides, 1], padding,
        activation=activation, dilations=[1, *dilations, 1], name="c"), lambda g: {"x:0": x})
    want = _activate(_conv64(x, f, strides, padding, dilations, groups) + b, activation)
    assert_conforms(by_onednn, want.astype(np.float32), g, name)
    assert_conforms(by_onednn, by_numpy, g, name)


@pytest.mark.parametrize("multiplier, strides", [(1, (1, 1)), (2, (2, 2))])
@pytest.mark.parametrize("activation", [None, "Relu6"])
def test_fused_depthwise_matches_float64(monkeypatch, multiplier, strides, activation):
    rng = np.random.default_rng(8)
    x = rng.normal(size=(2, 9, 10, 6)).astype(np.float32)
    f = rng.normal(size=(3, 3, 6, multiplier)).astype(np.float32)
    b = rng.normal(size=6 * multiplier).astype(np.float32)
    g, name, (by_onednn, by_numpy) = _run_both(monkeypatch, lambda: fused_depthwise_conv2d(
        tf.placeholder(tf.float32, x.shape, name="x"), tf.constant(f), tf.constant(b), [1, *strides, 1], "SAME",
        activation=activation, name="c"), lambda g: {"x:0": x})
    want = _activate(_conv64(x, _depthwise_as_grouped(f), strides, "SAME", groups=6) + b, activation)
    assert_conforms(by_onednn, want.astype(np.float32), g, name)
    assert_conforms(by_onednn, by_numpy, g, name)


@pytest.mark.parametrize("transpose_a, transpose_b", [(False, False), (True, False), (False, True), (True, True)])
def test_fused_matmul_matches_float64(monkeypatch, transpose_a, transpose_b):
    rng = np.random.default_rng(9)
    a = rng.normal(size=(64, 160)).astype(np.float32)  # above MATMUL_MIN_WORK: oneDNN takes it
    w = rng.normal(size=(160, 128)).astype(np.float32)
    b = rng.normal(size=128).astype(np.float32)
    a_in, w_in = (a.T.copy() if transpose_a else a), (w.T.copy() if transpose_b else w)
    g, name, (by_onednn, by_numpy) = _run_both(monkeypatch, lambda: fused_matmul(
        tf.placeholder(tf.float32, a_in.shape, name="a"), tf.constant(w_in), tf.constant(b), activation="Relu",
        transpose_a=transpose_a, transpose_b=transpose_b, name="m"), lambda g: {"a:0": a_in})
    want = np.maximum(a.astype(np.float64) @ w + b, 0)
    assert_conforms(by_onednn, want.astype(np.float32), g, name)
    assert_conforms(by_onednn, by_numpy, g, name)


def _max_pool_taps(x, k, s, pads):
    """TF's MaxPool, tap by tap: each window starts at the lowest finite value and takes a tap only
    when strictly greater, in row-major order; padding is no tap. pads: (top, bottom, left, right)."""
    n, h, w, c = x.shape
    top, bottom, left, right = pads
    oh, ow = (h + top + bottom - k[0]) // s[0] + 1, (w + left + right - k[1]) // s[1] + 1
    out = np.full((n, oh, ow, c), np.finfo(np.float32).min, np.float32)
    for b, i, j, ch in np.ndindex(n, oh, ow, c):
        for di, dj in np.ndindex(*k):
            r, q = i * s[0] + di - top, j * s[1] + dj - left
            if 0 <= r < h and 0 <= q < w and x[b, r, q, ch] > out[b, i, j, ch]:
                out[b, i, j, ch] = x[b, r, q, ch]
    return out


@pytest.mark.parametrize("shape, k, s, padding, pads", [
    ((2, 7, 8, 5), (3, 3), (2, 2), "VALID", (0, 0, 0, 0)),
    ((1, 7, 8, 16), (3, 3), (2, 2), "SAME", (1, 1, 0, 1)),  # SAME: the extra row and column at the end
    ((1, 6, 6, 3), (2, 2), (1, 1), "SAME", (0, 1, 0, 1)),
    ((1, 5, 6, 4), (3, 2), (1, 2), [[0, 0], [2, 1], [1, 0], [0, 0]], (2, 1, 1, 0)),
])
def test_max_pool_skips_nan_and_padding_as_tensorflow(monkeypatch, shape, k, s, padding, pads):
    """MaxPool through oneDNN against the tap-by-tap rule, on inputs full of NaN, -inf, +inf and
    both zeros (values compared, zeros of either sign equal), and against numpy's kernel."""
    rng = np.random.default_rng(13)
    special = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, -1.5, 2.25], np.float32)
    x = rng.choice(special, size=shape)
    x[..., 0] = np.nan  # windows of only NaN, of only -inf: the lowest finite value
    x[..., 1] = -np.inf
    served = []  # per call: whether oneDNN took it
    real = onednn.max_pool

    def spy(*args):
        result = real(*args)
        served.append(result is not None)
        return result
    monkeypatch.setattr(onednn, "max_pool", spy)
    g = tf.Graph()
    with g.as_default():
        out = tf.nn.max_pool(tf.placeholder(tf.float32, shape, name="x"), [1, *k, 1], [1, *s, 1], padding)
    want = _max_pool_taps(x, k, s, pads)
    for switch in ("1", "0"):
        monkeypatch.setenv("GRAPHDEF_ONEDNN", switch)
        served.clear()
        with tf.Session(graph=g) as sess:
            got = sess.run(out, {"x:0": x})
        assert served == ([True] if switch == "1" else [False]), f"GRAPHDEF_ONEDNN={switch}: {served}"
        np.testing.assert_array_equal(got, want)


def test_nodes_of_one_shape_keep_their_own_filters(monkeypatch):
    """Two convolutions of the same shapes share one oneDNN primitive; each keeps its own reordered
    filter (the first binding kept one per shape, and every run re-reordered them in turn)."""
    rng = np.random.default_rng(10)
    x = rng.normal(size=(1, 6, 6, 16)).astype(np.float32)
    f1, f2 = (rng.normal(size=(3, 3, 16, 16)).astype(np.float32) for _ in range(2))
    zero = np.zeros(16, np.float32)

    def build():
        xin = tf.placeholder(tf.float32, x.shape, name="x")
        first = fused_conv2d(xin, tf.constant(f1), tf.constant(zero), [1, 1, 1, 1], "SAME", name="c1")
        return fused_conv2d(first, tf.constant(f2), tf.constant(zero), [1, 1, 1, 1], "SAME", name="c2")
    g, name, (by_onednn, _) = _run_both(monkeypatch, build, lambda g: {"x:0": x})
    want = _conv64(_conv64(x, f1, (1, 1), "SAME"), f2, (1, 1), "SAME")
    assert_conforms(by_onednn, want.astype(np.float32), g, name, slack=2)
    monkeypatch.setenv("GRAPHDEF_ONEDNN", "1")
    with tf.Session(graph=g) as sess:
        for _ in range(2):  # again, from the filters kept
            assert_conforms(sess.run(name, {"x:0": x}), want.astype(np.float32), g, name, slack=2)


def _check_filter_reordered_once(monkeypatch, g, fetch, x, want, onednn_filter_shape, slack=1):
    """Runs `fetch` three times, each within the policy of `want`; the filter and bias are kept, and
    the filter was reordered once (skips saying why where oneDNN reads it as it is)."""
    reorders = []
    real_execute = onednn._OneDNN.execute
    monkeypatch.setattr(onednn._OneDNN, "execute", lambda dnn, primitive, args: reorders.append(primitive)
                        or real_execute(dnn, primitive, args))
    with tf.Session(graph=g) as sess:
        for _ in range(3):
            assert_conforms(sess.run(fetch, {"x:0": x}), want.astype(np.float32), g, fetch, slack=slack)
    problem = next(p for key, p in onednn._problems.items()
                   if key[0] == "conv" and key[1:3] == (x.shape, onednn_filter_shape))
    assert len(problem.constants) == 2  # the filter and the bias
    if problem.reorder is None:
        pytest.skip("oneDNN reads this filter as it is here (no reorder to count), at this ISA")
    assert len(reorders) == 1


def test_a_depthwise_filter_is_reordered_once(monkeypatch):
    """The depthwise kernel hands oneDNN a reshape of its Const's filter, a new view every run; the
    reordered copy is still made once (it was made again on every run, 17 reorders a run on
    MobileNetV2), and the filter and bias are kept."""
    rng = np.random.default_rng(11)
    x = rng.normal(size=(1, 8, 8, 32)).astype(np.float32)
    f = rng.normal(size=(3, 3, 32, 1)).astype(np.float32)
    b = rng.normal(size=32).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        out = fused_depthwise_conv2d(tf.placeholder(tf.float32, x.shape, name="x"), tf.constant(f), tf.constant(b),
                                     [1, 1, 1, 1], "SAME", activation="Relu6", name="c")
    want = _activate(_conv64(x, _depthwise_as_grouped(f), (1, 1), "SAME", groups=32) + b, "Relu6")
    _check_filter_reordered_once(monkeypatch, g, out.name, x, want, (3, 3, 1, 32))


def test_a_filter_from_a_weights_file_is_reordered_once(monkeypatch, tmp_path):
    """A Const whose value is a weights file's mapped bytes (external_weights) is as constant as one
    from the model file: its reordered copy is made once."""
    rng = np.random.default_rng(13)
    x = rng.normal(size=(1, 6, 6, 16)).astype(np.float32)
    f = rng.normal(size=(3, 3, 16, 24)).astype(np.float32)
    b = rng.normal(size=24).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        fused_conv2d(tf.placeholder(tf.float32, x.shape, name="x"), tf.constant(f), tf.constant(b), [1, 1, 1, 1],
                     "SAME", activation="Relu", name="c")
    path = tmp_path / "model.pb"
    tf.save(g, str(path), external_weights=True, external_threshold=64)
    loaded = tf.load(str(path))
    mapped = [op.attrs["value"] for op in loaded.get_operations() if op.type == "Const" and op.attrs["value"].size > 24]
    assert len(mapped) == 1 and isinstance(mapped[0].base.base, memoryview)  # the filter, read from the map
    want = _activate(_conv64(x, f, (1, 1), "SAME") + b, "Relu")
    _check_filter_reordered_once(monkeypatch, loaded, "c:0", x, want, f.shape, slack=2)


@pytest.mark.parametrize("view", [False, True])
def test_a_filter_or_bias_that_may_change_is_read_again_every_run(view):
    """Only a read-only array over read-only memory is kept between runs: a writable filter or bias,
    or a read-only view of writable memory, may hold other values at the next run."""
    from graphdef.ops.windows import Window
    rng = np.random.default_rng(12)
    x = rng.normal(size=(1, 5, 5, 4)).astype(np.float32)
    f_memory = rng.normal(size=(3, 3, 4, 8)).astype(np.float32)
    b_memory = rng.normal(size=8).astype(np.float32)
    f, b = (f_memory.view(), b_memory.view()) if view else (f_memory, b_memory)
    if view:
        f.flags.writeable = b.flags.writeable = False
    window = Window(3, 3, [1, 1, 1, 1], "SAME")
    geometry = window.geometry(5, 5)
    for _ in range(3):
        got = onednn.convolve(x, f, 1, window, geometry, b)
        assert got is not None
        want = _conv64(x, f_memory, (1, 1), "SAME") + b_memory
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        f_memory *= -2.0
        b_memory += 1.0


def test_inf_filter_in_padding_makes_nan_as_tensorflow(monkeypatch):
    """oneDNN skips padding taps; TF multiplies them, so 0 * inf is NaN there: numpy serves such a filter."""
    x = np.ones((1, 3, 3, 1), np.float32)
    f = np.zeros((3, 3, 1, 1), np.float32)
    f[0, 0, 0, 0] = np.inf
    g, name, (by_onednn, by_numpy) = _run_both(monkeypatch, lambda: tf.nn.conv2d(
        tf.placeholder(tf.float32, x.shape, name="x"), tf.constant(f), [1, 1, 1, 1], "SAME"), lambda g: {"x:0": x},
        onednn_serves=False)
    assert np.isnan(by_onednn[0, 0, 0, 0]) and np.isinf(by_onednn[0, 1, 1, 0])
    np.testing.assert_array_equal(np.isnan(by_onednn), np.isnan(by_numpy))


def test_other_dtypes_and_empty_tensors_stay_with_numpy():
    from graphdef.ops.windows import Window
    window = Window(1, 1, [1, 1, 1, 1], "VALID")
    x64, f64 = np.ones((1, 2, 2, 3)), np.ones((1, 1, 3, 2))
    assert onednn.convolve(x64, f64, 1, window, window.geometry(2, 2)) is None
    empty = np.ones((0, 2, 2, 3), np.float32)
    assert onednn.convolve(empty, f64.astype(np.float32), 1, window, window.geometry(2, 2)) is None
    assert onednn.matmul(np.ones((0, 3), np.float32), np.ones((3, 2), np.float32)) is None
    small = np.ones((8, 8), np.float32)  # under MATMUL_MIN_WORK: numpy's product is quicker
    assert onednn.matmul(small, small) is None


@needs_trusted_refcounts
def test_an_output_buffer_is_written_again_only_when_nothing_holds_it(monkeypatch):
    """A problem writes into its last output again once nobody refers to it: never while the caller
    holds it or any view of its memory."""
    from graphdef.ops.windows import Window
    monkeypatch.setattr(kept_buffers, "KEEP_MIN_BYTES", 0)  # kept from any size, not only large ones
    rng = np.random.default_rng(11)
    window = Window(3, 3, [1, 1, 1, 1], "SAME")
    geometry = window.geometry(5, 5)
    f = rng.normal(size=(3, 3, 4, 8)).astype(np.float32)
    f.flags.writeable = False
    xs = [rng.normal(size=(1, 5, 5, 4)).astype(np.float32) for _ in range(3)]
    wants = [_conv64(x, f, (1, 1), "SAME").astype(np.float32) for x in xs]

    held = onednn.convolve(xs[0], f, 1, window, geometry)
    view = onednn.convolve(xs[1], f, 1, window, geometry)[0, 1]  # only a view of the second is kept
    third = onednn.convolve(xs[2], f, 1, window, geometry)
    assert third.base is not held.base and third.base is not view.base
    np.testing.assert_allclose(held, wants[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(view, wants[1][0, 1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(third, wants[2], rtol=1e-5, atol=1e-5)
    address = third.ctypes.data
    del third  # nothing holds it now: the next run of the problem writes there
    again = onednn.convolve(xs[0], f, 1, window, geometry)
    assert again.ctypes.data == address
    np.testing.assert_allclose(again, wants[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(held, wants[0], rtol=1e-5, atol=1e-5)


@needs_trusted_refcounts
def test_a_kept_output_is_still_donated_and_fetches_survive_the_next_run(monkeypatch, small_steps_donate):
    """The Session lets Tanh write into the convolution's kept output (the slot's reference is not
    another owner), and a fetched result the caller holds is not overwritten by the next run."""
    monkeypatch.setattr(kept_buffers, "KEEP_MIN_BYTES", 0)
    monkeypatch.setenv("GRAPHDEF_ONEDNN", "1")
    rng = np.random.default_rng(12)
    f = rng.normal(size=(3, 3, 8, 8)).astype(np.float32)
    xs = [rng.normal(size=(1, 6, 6, 8)).astype(np.float32) for _ in range(2)]
    g = tf.Graph()
    with g.as_default():
        xin = tf.placeholder(tf.float32, xs[0].shape, name="x")
        conv = fused_conv2d(xin, tf.constant(f), tf.constant(np.zeros(8, np.float32)), [1, 1, 1, 1], "SAME",
                            name="conv")
        out = tf.tanh(conv)  # not fused into the convolution: a step of its own, writing in place
    with tf.Session(graph=g) as sess:
        first = sess.run(out, {"x:0": xs[0]})
        assert kept_buffers.kept_references(first.base) == 1  # written in the convolution's kept buffer
        second = sess.run(out, {"x:0": xs[1]})
    for x, got in zip(xs, (first, second)):
        y = _conv64(x, f, (1, 1), "SAME")
        np.testing.assert_allclose(got, np.tanh(y), rtol=1e-5, atol=1e-5)


def test_a_max_pool_window_larger_than_its_input_stays_with_numpy():
    """SAME pads any ksize to fit: a hostile 2^31 window kept oneDNN busy for minutes, under the lock
    every oneDNN run takes. numpy's kernel refuses it at once, naming the size."""
    from graphdef.framework.limits import TensorTooLarge
    from graphdef.ops import pool
    x = np.ones((1, 4, 4, 3), np.float32)
    window = pool._pool_window([1, 2 ** 31, 2 ** 31, 1], [1, 1, 1, 1], "SAME", "NHWC")
    assert onednn.max_pool(x, window, window.geometry(4, 4)) is None
    with pytest.raises(TensorTooLarge):
        pool._max_pool(x, ksize=[1, 2 ** 31, 2 ** 31, 1], strides=[1, 1, 1, 1], padding="SAME",
                       explicit_paddings=[], data_format="NHWC")


@needs_trusted_refcounts
def test_kept_buffers_stay_within_their_budget(monkeypatch):
    """Past KEEP_MAX_BYTES a new output is not kept: runs at many batch sizes leave no set each."""
    monkeypatch.setattr(kept_buffers, "KEEP_MIN_BYTES", 0)
    monkeypatch.setattr(kept_buffers, "KEEP_MAX_BYTES", sum(kept_buffers._kept.values()) + 3000)
    slots = [kept_buffers.OutputSlot() for _ in range(3)]
    outs = [slot.empty((250,), 250) for slot in slots]  # 1000 bytes (+ alignment) each
    assert [kept_buffers.kept_references(out.base) for out in outs] == [1, 1, 0]
    for slot in slots:
        slot.release()
    assert not any(kept_buffers.kept_references(out.base) for out in outs)
