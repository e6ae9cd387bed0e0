"""Sliding-window geometry shared by convolution and pooling: NHWC attrs, TF's padding rule,
and the strided views and per-offset slices the kernels are built from (im2col, and the
per-offset products a depthwise convolution sums)."""

import threading

import numpy as np
from numpy.lib.stride_tricks import as_strided

from graphdef.framework.limits import check as check_size
from graphdef.ops.registry import Attr
from graphdef.framework.shapes import show

PADDINGS = ("SAME", "VALID", "EXPLICIT")


def window_attrs(explicit=True, dilations=True):
    """The attrs every windowed op shares, with TF's defaults."""
    attrs = {"strides": Attr("list(int)"), "padding": Attr("string"), "data_format": Attr("string", "NHWC")}
    if explicit:
        attrs["explicit_paddings"] = Attr("list(int)", ())
    if dilations:
        attrs["dilations"] = Attr("list(int)", (1, 1, 1, 1))
    return attrs


class Window:
    """One op's window along H and W: sizes, strides, dilations and padding, checked."""

    __slots__ = ("kh", "kw", "sh", "sw", "dh", "dw", "padding", "explicit")

    def __init__(self, kh, kw, strides, padding, dilations=(1, 1, 1, 1), explicit_paddings=(), data_format="NHWC",
                 what="strides"):
        if data_format != "NHWC":
            raise ValueError(f"data_format {data_format!r} is not supported, only NHWC; "
                             "transpose the input to NHWC (tf.transpose(x, [0, 2, 3, 1])) and use NHWC")
        strides, dilations = list(strides), list(dilations)
        for name, v in ((what, strides), ("dilations", dilations)):
            if len(v) != 4:
                raise ValueError(f"{name} must have 4 entries (N, H, W, C), got {v}")
            if v[0] != 1 or v[3] != 1:
                raise ValueError(f"{name} {v} must be 1 in the batch and channel dims")
            if min(v) < 1:
                raise ValueError(f"{name} {v} must be positive")
        if padding not in PADDINGS:
            raise ValueError(f"padding must be one of {', '.join(PADDINGS)}, got {padding!r}")
        explicit = [int(p) for p in explicit_paddings]
        if padding == "EXPLICIT":
            if len(explicit) != 8 or min(explicit) < 0:
                raise ValueError(f"EXPLICIT padding needs 8 non-negative explicit_paddings, got {explicit}")
            if any(explicit[i] for i in (0, 1, 6, 7)):
                raise ValueError(f"explicit_paddings {explicit} must not pad the batch or channel dims")
        elif explicit:
            raise ValueError(f"explicit_paddings {explicit} are only allowed with padding EXPLICIT")
        self.kh, self.kw = int(kh), int(kw)
        self.sh, self.sw = strides[1], strides[2]
        self.dh, self.dw = dilations[1], dilations[2]
        self.padding = padding
        self.explicit = explicit

    def _axis(self, size, k, s, d, pads):
        """TF's GetWindowedOutputSize: (output size, pad before, pad after) along one axis."""
        k_eff = (k - 1) * d + 1
        if self.padding == "SAME":
            out = (size + s - 1) // s
            total = max((out - 1) * s + k_eff - size, 0)
            return out, total // 2, total - total // 2
        before, after = pads if self.padding == "EXPLICIT" else (0, 0)
        span = size + before + after - k_eff + s
        out = span // s if span >= 0 else -(-span // s)  # C++ division truncates toward zero
        if out < 0:
            raise ValueError(f"a window of {k_eff} (size {k}, dilation {d}) does not fit in {size + before + after}")
        return out, before, after

    def geometry(self, h, w):
        """((OH, top, bottom), (OW, left, right)) for an H x W input."""
        return (self._axis(h, self.kh, self.sh, self.dh, self.explicit[2:4]),
                self._axis(w, self.kw, self.sw, self.dw, self.explicit[4:6]))

    def output_dims(self, h, w):
        """Static output H and W; None stays unknown."""
        oh = None if h is None else self._axis(h, self.kh, self.sh, self.dh, self.explicit[2:4])[0]
        ow = None if w is None else self._axis(w, self.kw, self.sw, self.dw, self.explicit[4:6])[0]
        return oh, ow

    def offsets(self, oh, ow, real=None):
        """(i, j, rows, cols) for every window offset: the slices of the padded input it touches.

        With real=(top, h, left, w) only the offsets whose rows and columns reach the real
        (unpadded) input are given: the others read padding alone, which every kernel ignores.
        The window may be far larger than the input (a file's ksize of 2^30 under SAME padding),
        and a loop over all of its offsets would not end.
        """
        if not (oh and ow):
            return
        top, h, left, w = real if real is not None else (0, None, 0, None)
        for i in self._reaching(self.kh, self.dh, self.sh, oh, top, h):
            rows = slice(i * self.dh, i * self.dh + (oh - 1) * self.sh + 1, self.sh)
            for j in self._reaching(self.kw, self.dw, self.sw, ow, left, w):
                yield i, j, rows, slice(j * self.dw, j * self.dw + (ow - 1) * self.sw + 1, self.sw)

    @staticmethod
    def _reaching(k, d, s, out, before, size):
        """The window positions along one axis whose samples (i*d + r*s for r < out) can fall in
        [before, before + size): the first reaches it only if its last sample does not fall short,
        the last only if its first sample is not past it."""
        if size is None:
            return range(k)
        if size <= 0:
            return range(0)
        first = max(0, -(-(before - (out - 1) * s) // d))
        last = min(k - 1, (before + size - 1) // d)
        return range(first, last + 1)


def infer_window(ctx, window_of):
    """Checks an NHWC input of rank 4 and returns (window, N, OH, OW, C); raises ctx.error on a mistake."""
    x = ctx.shape(0)
    if x.ndims not in (None, 4):
        raise ctx.error(f"input must be 4-D [batch, height, width, channels] (NHWC), got shape {show(x)}")
    try:
        window = window_of(ctx)
        dims = x.dims or (None,) * 4
        oh, ow = window.output_dims(dims[1], dims[2])
    except ValueError as e:
        raise ctx.error(f"{e} (input shape {show(x)})") from None
    return window, dims[0], oh, ow, dims[3]


def padded(x, top, bottom, left, right, value=0):
    """x [N,H,W,C] padded spatially with `value`; x itself when there is nothing to pad."""
    if not (top or bottom or left or right):
        return x
    n, h, w, c = x.shape
    if n and c:  # padding comes from attrs: may be huge (with no batch or channels, nothing is allocated)
        check_size((n, h + top + bottom, w + left + right, c), x.dtype)
    out = np.full((n, h + top + bottom, w + left + right, c), value, dtype=x.dtype)
    out[:, top:top + h, left:left + w, :] = x
    return out


class _Scratch(threading.local):
    """Each thread's reused work arrays, one per role, grown to the largest asked for: a
    convolution's padded input and patch matrix are rewritten on every run, and allocating
    them afresh costs page faults (large arrays come straight from the OS, zeroed)."""

    def __init__(self):
        self.buffers = {}


_SCRATCH = _Scratch()


def scratch(role, shape, dtype):
    """An uninitialised array of `shape` that stays this thread's `role` buffer: valid until the
    next scratch() call for the same role, so only for a kernel's own temporaries."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    buffer = _SCRATCH.buffers.get(role)
    if buffer is None or buffer.nbytes < nbytes:
        buffer = _SCRATCH.buffers[role] = np.empty(nbytes, np.uint8)
    return buffer[:nbytes].view(dtype).reshape(shape)


def padded_scratch(x, top, bottom, left, right):
    """padded(x, ...) with zeros, in this thread's reused "padded" buffer (see scratch)."""
    if not (top or bottom or left or right):
        return x
    n, h, w, c = x.shape
    check_size((n, h + top + bottom, w + left + right, c), x.dtype)  # padding comes from attrs: may be huge
    out = scratch("padded", (n, h + top + bottom, w + left + right, c), x.dtype)
    out[:, :top] = 0
    out[:, top + h:] = 0
    out[:, top:top + h, :left] = 0
    out[:, top:top + h, left + w:] = 0
    out[:, top:top + h, left:left + w] = x
    return out


def patches(xp, window, oh, ow):
    """A read-only view [N, OH, OW, KH, KW, C] of every window of the padded input (no copy)."""
    n, _, _, c = xp.shape
    sn, sh, sw, sc = xp.strides
    return as_strided(xp, (n, oh, ow, window.kh, window.kw, c),
                      (sn, sh * window.sh, sw * window.sw, sh * window.dh, sw * window.dw, sc), writeable=False)


def im2col(x, window, geometry):
    """The [N*OH*OW, KH*KW*C] patch matrix, so a convolution is one matrix product: the input
    itself for a 1x1 stride-1 window, else this thread's reused "im2col" buffer (see scratch),
    to be used before the next im2col."""
    (oh, top, bottom), (ow, left, right) = geometry
    x = np.ascontiguousarray(x)
    if window.kh == window.kw == window.sh == window.sw == 1 and not (top or bottom or left or right):
        return x.reshape(-1, x.shape[3])
    # the patch matrix holds KH x KW copies of the input: a large filter multiplies its size
    check_size((x.shape[0] * oh * ow, window.kh * window.kw * x.shape[3]), x.dtype, "patch matrix")
    view = patches(padded_scratch(x, top, bottom, left, right), window, oh, ow)
    cols = scratch("im2col", view.shape, x.dtype)
    np.copyto(cols, view)
    return cols.reshape(x.shape[0] * oh * ow, -1)


def col2im(cols, window, geometry, shape):
    """The adjoint of im2col: adds each patch row back where it came from, giving `shape` [N,H,W,C]."""
    (oh, top, bottom), (ow, left, right) = geometry
    n, h, w, c = shape
    if window.kh == window.kw == window.sh == window.sw == 1 and not (top or bottom or left or right):
        return cols.reshape(shape)
    check_size((n, h + top + bottom, w + left + right, c), cols.dtype)  # padding comes from attrs
    out = np.zeros((n, h + top + bottom, w + left + right, c), dtype=cols.dtype)
    if oh and ow and out.size:
        cols = cols.reshape(n, oh, ow, window.kh, window.kw, c)
        # an offset reaching only padding adds where the crop below drops
        for i, j, rows, columns in window.offsets(oh, ow, (top, h, left, w)):
            out[:, rows, columns, :] += cols[:, :, :, i, j, :]
    return out[:, top:top + h, left:left + w, :]


def depthwise_einsum(xp, fw, window, out):
    """out[n, r, q, c] = the sum over offsets (i, j) of xp's sample times fw[i, j, c, 0]: one einsum
    over a read-only strided view [N, OH, KH, OW, KW, C] of every window (no copy), whose inner
    loop runs along the channels of both operands with the sum kept in the output."""
    n, oh, ow, c = out.shape
    sn, sh, sw, sc = xp.strides
    windows = as_strided(xp, (n, oh, window.kh, ow, window.kw, c),
                         (sn, sh * window.sh, sh * window.dh, sw * window.sw, sw * window.dw, sc), writeable=False)
    np.einsum("nriqjc,ijc->nrqc", windows, fw[..., 0], out=out)


# Output bytes worked at a time: a block and its product stay in the 1 MB L2 cache, and blocks
# are large enough that numpy's per-call cost (2 calls per window offset per block) stays small;
# an image smaller than this goes in one block with the next images of the batch.
DEPTHWISE_BLOCK_BYTES = 1 << 18


def depthwise_sum(xp, fw, window, acc):
    """acc[n, r, q, c, m] = the sum of xp's samples times fw, offset by offset in (i, j) order (the order,
    so the rounding, of one pass per offset over the whole output), a block of images or of one
    image's output rows at a time, products in one reused buffer, in the input's dtype.

    With one multiplier, an output row's samples for one offset are OW x C values in a row of
    the input, contiguous when the stride along W is 1 (with stride s, they are in one of s
    column phases, each copied contiguous once): each row is then one long run for numpy's inner
    loop, against a filter row tiled OW times. Else the runs are C long."""
    n, oh, ow, c, m = acc.shape
    flat = m == 1
    sw = window.sw
    if flat:
        acc = acc.reshape(n, oh, ow * c)
        fw = np.tile(fw[..., 0], (1, 1, ow))  # [KH, KW, OW * C]
        # phase p holds columns p, p + sw, ... of every image: as [N, H, columns * C]
        phases = [xp] if sw == 1 else [np.ascontiguousarray(xp[:, :, p::sw]) for p in range(sw)]
        phases = [phase.reshape(n, phase.shape[1], -1) for phase in phases]
    row_bytes = max(1, ow * c * m * acc.itemsize)
    if row_bytes * oh <= DEPTHWISE_BLOCK_BYTES:
        images_per_block, rows_per_block = max(1, DEPTHWISE_BLOCK_BYTES // (row_bytes * oh)), oh
    else:
        images_per_block, rows_per_block = 1, max(1, DEPTHWISE_BLOCK_BYTES // row_bytes)
    product = np.empty((min(n, images_per_block), rows_per_block) + acc.shape[2:], acc.dtype)
    offsets = [(i, j, cols) for i, j, _, cols in window.offsets(oh, ow)]
    for n0 in range(0, n, images_per_block):
        images = slice(n0, min(n, n0 + images_per_block))
        for r0 in range(0, oh, rows_per_block):
            r1 = min(oh, r0 + rows_per_block)
            block = acc[images, r0:r1]
            tmp = product[:block.shape[0], :r1 - r0]
            for k, (i, j, cols) in enumerate(offsets):
                start = i * window.dh + r0 * window.sh
                rows = slice(start, start + (r1 - r0 - 1) * window.sh + 1, window.sh)
                if flat:
                    column = j * window.dw
                    first = (column // sw) * c
                    samples = phases[column % sw][images, rows, first:first + ow * c]
                else:
                    samples = xp[images, rows, cols, :, None]
                if k == 0:  # the first product is the sum so far (acc needs no zeros)
                    np.multiply(samples, fw[i, j], out=block)
                else:
                    np.multiply(samples, fw[i, j], out=tmp)
                    block += tmp
